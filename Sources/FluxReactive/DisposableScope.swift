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
public final class DisposableScope: Disposable, @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  private var disposables: [any Disposable] = []
  // Guarded by `lock`.
  private var disposed = false

  /// Creates an empty scope.
  public init() {}

  /// Creates a scope that holds `disposables`.
  ///
  /// - Parameter disposables: The disposables to keep.
  public init<S: Sequence>(_ disposables: S) where S.Element == any Disposable {
    self.disposables = Array(disposables)
  }

  deinit {
    for disposable in disposables { disposable.dispose() }
  }

  /// Whether the scope has been disposed.
  public var isDisposed: Bool {
    lock.withLock { disposed }
  }

  /// Keeps `disposable` until the scope is disposed; disposes it at once if that happened
  /// already.
  ///
  /// - Parameter disposable: The disposable to keep.
  public func add(disposable: any Disposable) {
    let accepted = lock.withLock {
      if disposed { return false }
      disposables.append(disposable)
      return true
    }
    if !accepted { disposable.dispose() }
  }

  /// Disposes every kept disposable and every one added later. Calling it again does nothing.
  public func dispose() {
    let taken = lock.withLock {
      disposed = true
      let taken = disposables
      disposables = []
      return taken
    }
    for disposable in taken { disposable.dispose() }
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
