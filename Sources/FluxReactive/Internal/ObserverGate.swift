import FluxCore

/// An observer that can be closed for good: once ``close()`` has returned, no call of it starts.
///
/// Each call runs holding the gate's lock, the call's own delivery turn, so that `close()` from
/// another thread waits for a call in flight and excludes every later one (invariant 6). The
/// lock is recursive so that the observer may close its own gate from inside a call; that call
/// finishes, and no other starts. What a close from inside a call asks to do next (stopping what
/// feeds the gate, which may wait for a sink's delivery on another thread) waits for the end of
/// that call: a thread that closes the gate meanwhile, from inside that delivery, waits for the
/// call, and the call must not wait for it. A value sent from inside a call (a producer that
/// sends again as its observer runs) waits for the end of that call, so calls never nest.
/// `close()` releases the observer after the lock, and a call keeps it alive until the call has
/// returned; until the lock is free, if the gate was closed during the call (invariant 16).
///
/// Used where Flux hands an observer to code that may call it from any thread at any time:
/// a producer signal's observer, and the observer that `observe(on:)` runs on its executor.
@usableFromInline
final class ObserverGate<Value>: @unchecked Sendable {
  private let lock = RecursiveLock()
  // Guarded by `lock`: `nil` once the gate is closed.
  private var observer: ((Value) -> Void)?
  // Guarded by `lock`: whether a call runs. Only its own thread can find it set, since the call
  // holds the lock: a send from inside the call.
  private var isCalling = false
  // Guarded by `lock`: values sent from inside a call, for after it.
  private var pending = FIFOBuffer<Value>()
  // Guarded by `lock`: what a close from inside the running call left for the end of that call.
  // At most one: only the first disposal of the gate's one observation leaves anything.
  private var afterCall: (@Sendable () -> Void)?

  /// Creates an open gate in front of `observer`.
  init(_ observer: @escaping @Sendable (Value) -> Void) {
    self.observer = observer
  }

  /// Calls the observer with `value`, unless the gate is closed. Sent from inside a call, the
  /// value waits until that call returns: one value at a time, in order.
  func send(_ value: Value) {
    lock.lock()
    if isCalling {
      pending.append(value)
      lock.unlock()
      return
    }
    isCalling = true
    var observer = self.observer
    var next: Value? = value
    while let value = next {
      // Read again for each value: a close from inside a call stops the values after it. The
      // copy is never the last reference: `observer` keeps one until after the lock.
      let current = self.observer
      current?(value)
      next = pending.popFirst()
    }
    isCalling = false
    let finish = _slowPath(afterCall != nil) ? afterCall.take() : nil
    // While the gate is open it holds the observer too, so the copy is not the last reference
    // and goes here, under the lock: a `close()` waiting on another thread for this call then
    // drops the last one itself, and the observer is freed before its `dispose()` returns
    // (invariant 6). Closed during the call, the gate holds nothing: the copy may be the last
    // reference, and goes after the lock (invariant 16).
    if self.observer != nil { observer = nil }
    lock.unlock()
    withExtendedLifetime(observer) {}
    finish?()
  }

  /// Closes the gate, waiting for a call in flight on another thread; releases the observer
  /// and drops the values waiting for it.
  ///
  /// Called from inside a call of this gate, it leaves `finish` to run once that call has
  /// returned and released the lock, and returns `true`; otherwise it returns `false` and the
  /// caller runs `finish` itself. `finish` may wait for another thread that is itself closing
  /// this gate, and so waiting for the call to end: it must not run inside the call.
  @discardableResult
  func close(deferring finish: (@Sendable () -> Void)? = nil) -> Bool {
    lock.lock()
    let observer = self.observer.take()
    let dropped = pending.removeAll()
    // Only the thread running a call can find `isCalling` set: the call holds the lock.
    let isDeferred = finish != nil && isCalling
    if isDeferred { afterCall = finish }
    lock.unlock()
    withExtendedLifetime((observer, dropped)) {}  // released here, after the lock
    return isDeferred
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
  /// Where disposal is. The observation reports itself disposed (and a ``DisposableScope``
  /// drops it) only once no call can start any more, not while the first `dispose()` still
  /// waits for a call in flight.
  private enum Phase {
    case live
    /// The first `dispose()` has begun, and may wait for a call in flight.
    case closing
    /// A `dispose()` (the first, or one that came while it waits) has closed the gate: no call
    /// can start; the first may still be stopping what feeds the observer.
    case closed
    case disposed
  }
  // Guarded by `lock`.
  private var phase = Phase.live

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
    switch lock.withLock({ phase }) {
    case .closed, .disposed: true
    case .closing: false  // a `dispose()` waits for a call in flight
    case .live: gate == nil && stop.isDisposed
    }
  }

  var isDisposedWithoutWaiting: Bool? {
    switch lock.withLock({ phase }) {
    case .closed, .disposed: return true
    case .closing: return nil
    case .live:
      guard gate == nil else { return false }
      return stop.isSurelyDisposed ? true : nil
    }
  }

  @usableFromInline
  func dispose() {
    let first = lock.withLock {
      guard case .live = phase else { return false }
      phase = .closing
      return true
    }
    // Every caller waits for a call in flight on another thread. The first then stops what
    // feeds the observer; from inside a call, once that call has returned: stopping may wait
    // for a sink's delivery on another thread, whose observer may be disposing this observation
    // too, and so waiting for the call (a deadlock if the call waited for it).
    var finish: (@Sendable () -> Void)?
    if first { finish = { @Sendable in self.stopFeeding() } }
    let isDeferred = gate?.close(deferring: finish) ?? false
    lock.withLock {
      if case .closing = phase { phase = .closed }
    }
    if first && !isDeferred { stopFeeding() }
  }

  /// Ends what feeds the observer, once its gate is closed.
  private func stopFeeding() {
    stop.dispose()
    lock.withLock { phase = .disposed }
  }
}
