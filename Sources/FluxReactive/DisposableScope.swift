import FluxCore

/// Keeps disposables and disposes all of them at once: on ``dispose()`` or when the scope is
/// freed.
///
/// ```swift
/// var disposableScope: DisposableScope? = DisposableScope()
/// disposableScope += signal.observe { value in
///   // Not called after the scope is gone.
/// }
/// disposableScope = nil  // disposes the observation
/// ```
///
/// > Important: Thread-safe. A disposable added after the scope was disposed is disposed at
/// > once. Disposables are disposed outside the scope's lock, in the order they were added.
/// > The scope keeps no disposable that is already disposed: one added disposed is dropped,
/// > and those disposed since they were added are dropped from time to time as others are
/// > added, so a long-lived scope with many short observations does not grow. Adding never
/// > waits for a sink's delivery on another thread to learn whether an observation of it is
/// > disposed: one that cannot tell at once is kept until a later pruning.
public final class DisposableScope: Disposable, @unchecked Sendable {
  private enum Phase {
    /// Keeping what is added; `isPruning` while a thread prunes (outside the lock).
    case live(isPruning: Bool)
    /// `dispose()` is disposing what was kept: these, which a second `dispose()` disposes too,
    /// so that it also returns only once they are disposed.
    case disposing([any Disposable])
    case disposed
  }

  private let lock = Lock()
  // Guarded by `lock`.
  private var disposables: [any Disposable] = []
  // Guarded by `lock`.
  private var phase = Phase.live(isPruning: false)
  /// The count at which `add` next drops what has been disposed since; twice what was left
  /// after the last pruning, so pruning costs O(1) amortised per add. Guarded by `lock`.
  private var pruneThreshold = DisposableScope.minimumPruneThreshold

  private static let minimumPruneThreshold = 32

  /// Creates an empty scope.
  public init() {}

  /// Creates a scope that holds `disposables`, except those already disposed.
  ///
  /// - Parameter disposables: The disposables to keep.
  public init<S: Sequence>(_ disposables: S) where S.Element == any Disposable {
    self.disposables = disposables.filter { !$0.isSurelyDisposed }
  }

  deinit {
    for disposable in disposables { disposable.dispose() }
  }

  /// Whether the scope has been disposed: `true` once a ``dispose()`` has disposed everything
  /// it held, `false` while it still waits for that.
  public var isDisposed: Bool {
    lock.withLock {
      if case .disposed = phase { return true }
      return false
    }
  }

  /// The number of disposables kept, for tests and diagnostics.
  var count: Int {
    lock.withLock { disposables.count }
  }

  /// Keeps `disposable` until the scope is disposed; disposes it at once if that happened
  /// already. A disposable that is already disposed is not kept.
  ///
  /// - Parameter disposable: The disposable to keep.
  public func add(disposable: any Disposable) {
    if disposable.isSurelyDisposed { return }
    enum Outcome {
      case kept
      case rejected
      case prune([any Disposable])
    }
    let outcome: Outcome = lock.withLock {
      guard case .live(let isPruning) = phase else { return .rejected }
      disposables.append(disposable)
      guard disposables.count >= pruneThreshold, !isPruning else { return .kept }
      phase = .live(isPruning: true)
      return .prune(disposables)
    }
    switch outcome {
    case .kept: break
    case .rejected: disposable.dispose()
    case .prune(let snapshot): prune(snapshot)
    }
  }

  /// Drops the disposed ones among `snapshot`, the first kept disposables; asks each whether it
  /// is disposed outside the lock (a disposable may take locks of its own), and never waits for
  /// a sink's delivery on another thread to find out: one it cannot tell at once stays, for the
  /// next pruning.
  private func prune(_ snapshot: [any Disposable]) {
    let isDisposed = snapshot.map(\.isSurelyDisposed)
    let dropped: [any Disposable] = lock.withLock {
      // Only `add` appends and only `dispose` empties, so the snapshot is still the prefix.
      guard case .live = phase else { return [] }
      phase = .live(isPruning: false)
      var kept: [any Disposable] = []
      kept.reserveCapacity(disposables.count)
      var dropped: [any Disposable] = []
      for (index, disposable) in disposables.enumerated() {
        if index < isDisposed.count, isDisposed[index] {
          dropped.append(disposable)
        } else {
          kept.append(disposable)
        }
      }
      disposables = kept
      pruneThreshold = max(Self.minimumPruneThreshold, kept.count * 2)
      return dropped
    }
    withExtendedLifetime(dropped) {}  // released after the lock
  }

  /// Disposes every kept disposable and every one added later. A second call, while the
  /// first still runs on another thread, disposes the same disposables, so it too returns only
  /// once they are disposed; a call after that does nothing. (An ``AnyDisposable`` whose
  /// closure another thread is running returns at once, as its own docs say: keep the
  /// disposables it wraps in the scope instead.)
  ///
  /// > Important: Like disposing one observation, this waits for a call of a kept observer
  /// > running on another thread. So two threads that dispose one scope at once, each from
  /// > inside a delivery to one of its observers, wait for each other for ever: dispose a
  /// > scope shared that way from one place, or on one executor.
  public func dispose() {
    let taken: [any Disposable] = lock.withLock {
      switch phase {
      case .live:
        let taken = disposables
        disposables = []
        phase = .disposing(taken)
        return taken
      case .disposing(let taken):
        return taken
      case .disposed:
        return []
      }
    }
    for disposable in taken { disposable.dispose() }
    let released: [any Disposable] = lock.withLock {
      guard case .disposing(let taken) = phase else { return [] }
      phase = .disposed
      return taken
    }
    withExtendedLifetime(released) {}  // released after the lock
  }

  /// Adds `disposable` to `scope`.
  ///
  /// - Parameters:
  ///   - scope: The scope that keeps the disposable.
  ///   - disposable: The disposable to keep.
  public static func += (scope: DisposableScope, disposable: any Disposable) {
    scope.add(disposable: disposable)
  }
}

/// Adds `disposable` to `scope` if there is one; disposes it at once if `scope` is `nil`.
///
/// ```swift
/// var disposableScope: DisposableScope? = DisposableScope()
/// disposableScope += signal.observe { print($0) }
/// ```
///
/// - Parameters:
///   - scope: The scope that keeps the disposable, if any.
///   - disposable: The disposable to keep.
public func += (scope: DisposableScope?, disposable: any Disposable) {
  if let scope {
    scope.add(disposable: disposable)
  } else {
    disposable.dispose()
  }
}
