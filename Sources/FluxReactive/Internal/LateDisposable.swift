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
final class LateDisposable: PromptlyDisposedQuery, PromptlyDisposable, @unchecked Sendable {
  private enum Phase {
    /// Not disposed; the inner disposable, once set.
    case live((any Disposable)?)
    /// `disposeWithoutWaiting()` is trying to dispose the inner disposable; it goes back to
    /// `live` if that would wait, unless a `dispose()` took over meanwhile.
    case trying(any Disposable)
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
    case .trying, .disposing: false
    case .disposed: true
    }
  }

  var isDisposedWithoutWaiting: Bool? {
    switch lock.withLock({ phase }) {
    case .live(nil): false
    case .live(let inner?): inner.isSurelyDisposed ? true : nil
    case .trying, .disposing: nil
    case .disposed: true
    }
  }

  /// Whether a `dispose()` has begun (it may still wait for the inner disposable).
  var hasStartedDisposing: Bool {
    switch lock.withLock({ phase }) {
    case .live: false
    case .trying, .disposing, .disposed: true
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
      case .live(let inner?), .trying(let inner):
        // Over a `disposeWithoutWaiting()` that is trying: this call disposes, waiting if it
        // must, and that one leaves the phase to it.
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

  /// Disposes the inner disposable at once if that waits for no other thread; otherwise leaves
  /// everything as it was and returns `false`. Only an inner disposable that can tell
  /// (``PromptlyDisposable``) is disposed here: any other might wait.
  func disposeWithoutWaiting() -> Bool {
    let inner: (any PromptlyDisposable)? = lock.withLock {
      switch phase {
      case .live(nil):
        phase = .disposed
        return nil
      case .live(let inner?):
        guard let prompt = inner as? any PromptlyDisposable else { return nil }
        phase = .trying(inner)
        return prompt
      case .trying, .disposing, .disposed:
        return nil
      }
    }
    guard let inner else { return isDisposedWithoutWaiting == true }
    let disposed = inner.disposeWithoutWaiting()
    let released: (any Disposable)? = lock.withLock {
      // A `dispose()` that came meanwhile owns the phase now (`disposing`, or `disposed`).
      guard case .trying(let current) = phase else { return nil }
      phase = disposed ? .disposed : .live(current)
      return disposed ? current : nil
    }
    withExtendedLifetime(released) {}  // released after the lock
    return disposed
  }
}
