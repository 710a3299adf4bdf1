import FluxCore

/// A disposable that runs a closure, exactly once, when disposed.
///
/// ```swift
/// let disposable = AnyDisposable { print("ended") }
/// disposable.dispose()  // prints "ended"
/// disposable.dispose()  // does nothing
/// ```
///
/// > Important: Thread-safe: under concurrent ``dispose()`` calls the closure still runs once,
/// > on the thread of the first call, and is released right after. A call made while the first
/// > is still running the closure returns at once, without waiting for it: the closure may
/// > dispose an observation whose observer, on another thread, disposes this same disposable,
/// > and waiting there would deadlock. ``isDisposed`` turns `true` once the closure has
/// > returned. To make every caller wait until disposal has taken effect, put the inner
/// > disposables themselves in a ``DisposableScope``.
public final class AnyDisposable: Disposable, @unchecked Sendable {
  private enum Phase {
    /// Not disposed; the closure to run, if any.
    case live((@Sendable () -> Void)?)
    /// The first ``dispose()`` is running the closure.
    case disposing
    case disposed
  }

  private let lock = Lock()
  // Guarded by `lock`.
  private var phase: Phase

  /// Creates a disposable that does nothing but record that it was disposed.
  public init() {
    phase = .live(nil)
  }

  /// Creates a disposable that runs `dispose` when disposed.
  ///
  /// - Parameter dispose: Runs once, on the first ``dispose()``.
  public init(_ dispose: @escaping @Sendable () -> Void) {
    phase = .live(dispose)
  }

  /// Whether disposal has taken effect: ``dispose()`` was called and its closure has returned.
  public var isDisposed: Bool {
    lock.withLock {
      if case .disposed = phase { return true }
      return false
    }
  }

  /// Runs the closure if this is the first call; does nothing otherwise.
  public func dispose() {
    let action: (@Sendable () -> Void)? = lock.withLock {
      guard case .live(let action) = phase else { return nil }
      phase = action == nil ? .disposed : .disposing
      return action
    }
    guard let action else { return }
    action()
    lock.withLock { phase = .disposed }
  }
}
