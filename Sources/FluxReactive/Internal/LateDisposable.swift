import FluxCore

/// A disposable that stands for one that is only known later, so an observer can end its own
/// observation.
///
/// Disposing it before the inner disposable arrives disposes that one on arrival. It is
/// disposed once the inner one is, whoever disposed that (a sink freed, say), so a
/// ``DisposableScope`` drops it.
///
/// Every ``dispose()`` returns only once the inner disposable's has taken effect: a second
/// call, on another thread, while the first waits for a delivery in flight, disposes the inner
/// one too, and so waits as the first does (the inner one's `dispose()` is idempotent).
final class LateDisposable: PromptlyDisposedQuery, @unchecked Sendable {
  private enum Phase {
    /// Not disposed; the inner disposable, once set.
    case live((any Disposable)?)
    /// `dispose()` is disposing the inner disposable.
    case disposing(any Disposable)
    case disposed
  }

  private let lock = Lock()
  // Guarded by `lock`.
  private var phase = Phase.live(nil)

  init() {}

  /// Whether disposing has taken effect: `false` while a `dispose()` still waits for it.
  var isDisposed: Bool {
    switch lock.withLock({ phase }) {
    case .live(let inner): inner?.isDisposed ?? false  // asked outside the lock: it may wait
    case .disposing: false
    case .disposed: true
    }
  }

  var isDisposedWithoutWaiting: Bool? {
    switch lock.withLock({ phase }) {
    case .live(nil): false
    case .live(let inner?): inner.isSurelyDisposed ? true : nil
    case .disposing: nil
    case .disposed: true
    }
  }

  /// Whether a `dispose()` has begun (it may still wait for the inner disposable).
  var hasStartedDisposing: Bool {
    switch lock.withLock({ phase }) {
    case .live: false
    case .disposing, .disposed: true
    }
  }

  /// Sets the disposable this one stands for; disposes it at once if this one is disposed.
  func set(_ disposable: any Disposable) {
    let accepted = lock.withLock {
      guard case .live(nil) = phase else { return false }
      phase = .live(disposable)
      return true
    }
    if !accepted { disposable.dispose() }
  }

  func dispose() {
    let inner: (any Disposable)? = lock.withLock {
      switch phase {
      case .live(let inner?):
        phase = .disposing(inner)
        return inner
      case .live(nil):
        phase = .disposed
        return nil
      case .disposing(let inner):
        return inner
      case .disposed:
        return nil
      }
    }
    guard let inner else { return }
    inner.dispose()
    let released: (any Disposable)? = lock.withLock {
      guard case .disposing(let inner) = phase else { return nil }
      phase = .disposed
      return inner
    }
    withExtendedLifetime(released) {}  // released after the lock
  }
}
