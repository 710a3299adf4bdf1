import FluxCore

/// An observer that can be closed for good: once ``close()`` has returned, no call of it starts.
///
/// Each call runs holding the gate's lock, the call's own delivery turn, so that `close()` from
/// another thread waits for a call in flight and excludes every later one (invariant 6). The
/// lock is recursive so that the observer may close its own gate from inside a call; that call
/// finishes, and no other starts. `close()` releases the observer after the lock, and a call
/// keeps it alive until the call has returned and the lock is free (invariant 16).
///
/// Used where Flux hands an observer to code that may call it from any thread at any time:
/// a producer signal's observer, and the observer that `observe(on:)` runs on its executor.
@usableFromInline
final class ObserverGate<Value>: @unchecked Sendable {
  private let lock = RecursiveLock()
  // Guarded by `lock`: `nil` once the gate is closed.
  private var observer: ((Value) -> Void)?

  /// Creates an open gate in front of `observer`.
  init(_ observer: @escaping @Sendable (Value) -> Void) {
    self.observer = observer
  }

  /// Calls the observer with `value`, unless the gate is closed.
  func send(_ value: Value) {
    lock.lock()
    let observer = self.observer
    observer?(value)
    lock.unlock()
    withExtendedLifetime(observer) {}  // the last reference may go here, after the lock
  }

  /// Closes the gate, waiting for a call in flight on another thread; releases the observer.
  func close() {
    lock.lock()
    let observer = self.observer.take()
    lock.unlock()
    withExtendedLifetime(observer) {}  // released here, after the lock
  }
}

/// The disposable of an observation whose observer sits behind an ``ObserverGate``: closes the
/// gate, then ends what feeds it, once.
///
/// Holds the gate weakly: the gate is owned by whatever calls it (the function a producer
/// keeps, the upstream observer of `observe(on:)` and the values queued on its executor), so
/// the user's observer goes when they let it go, even while someone keeps this disposable.
@usableFromInline
final class GatedObservation<Value>: PromptlyDisposedQuery, @unchecked Sendable {
  // Set once; weak loads are thread-safe.
  private weak var gate: ObserverGate<Value>?
  // Constant.
  private let stop: any Disposable
  private let lock = Lock()
  // Guarded by `lock`.
  private var disposed = false

  init(gate: ObserverGate<Value>, stop: any Disposable) {
    self.gate = gate
    self.stop = stop
  }

  /// Runs `producer` with a gated `observer` and returns the disposable of that observation.
  ///
  /// The gate is open while `producer` runs, so values it sends synchronously arrive.
  @usableFromInline
  static func start(
    _ producer: Signal<Value>.Producer,
    observer: @escaping @Sendable (Value) -> Void
  ) -> any Disposable {
    let gate = ObserverGate(observer)
    let stop = producer { gate.send($0) }
    return GatedObservation(gate: gate, stop: stop)
  }

  /// Whether no call of the observer can start any more: it was disposed, or what feeds it has
  /// ended *and* nothing holds the gate (no value waits on an executor, no producer keeps the
  /// observer). An ended upstream alone is not enough: values it sent may still be queued, and
  /// a ``DisposableScope`` that dropped this observation then would never close its gate.
  @usableFromInline
  var isDisposed: Bool {
    lock.withLock { disposed } || (gate == nil && stop.isDisposed)
  }

  var isDisposedWithoutWaiting: Bool? {
    if lock.withLock({ disposed }) { return true }
    guard gate == nil else { return false }
    return stop.isSurelyDisposed ? true : nil
  }

  @usableFromInline
  func dispose() {
    let first = lock.withLock {
      defer { disposed = true }
      return !disposed
    }
    gate?.close()  // every caller waits for a call in flight
    if first { stop.dispose() }
  }
}
