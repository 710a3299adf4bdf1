import FluxCore

/// A disposable that stands for one that is only known later, so an observer can end its own
/// observation.
///
/// Disposing it before the inner disposable arrives disposes that one on arrival.
final class LateDisposable: Disposable, @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  private var inner: (any Disposable)?
  // Guarded by `lock`.
  private var disposed = false

  init() {}

  var isDisposed: Bool {
    lock.withLock { disposed }
  }

  /// Sets the disposable this one stands for; disposes it at once if this one is disposed.
  func set(_ disposable: any Disposable) {
    let accepted = lock.withLock {
      if disposed { return false }
      inner = disposable
      return true
    }
    if !accepted { disposable.dispose() }
  }

  func dispose() {
    let inner: (any Disposable)? = lock.withLock {
      disposed = true
      return self.inner.take()
    }
    inner?.dispose()
  }
}
