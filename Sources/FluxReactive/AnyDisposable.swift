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
/// > on the thread of the first call, and is released right after.
public final class AnyDisposable: Disposable, @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`: the closure still to run; `nil` once disposed.
  private var action: (@Sendable () -> Void)?
  // Guarded by `lock`.
  private var disposed = false

  /// Creates a disposable that does nothing but record that it was disposed.
  public init() {}

  /// Creates a disposable that runs `dispose` when disposed.
  ///
  /// - Parameter dispose: Runs once, on the first ``dispose()``.
  public init(_ dispose: @escaping @Sendable () -> Void) {
    self.action = dispose
  }

  /// Whether ``dispose()`` has been called.
  public var isDisposed: Bool {
    lock.withLock { disposed }
  }

  /// Runs the closure if this is the first call; does nothing otherwise.
  public func dispose() {
    let action: (@Sendable () -> Void)? = lock.withLock {
      disposed = true
      return self.action.take()
    }
    action?()
  }
}
