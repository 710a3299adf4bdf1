import FluxCore

/// An observer closure in a one-field struct: calling it through a borrowed slot does not
/// retain and release the closure's context on every value.
struct Observer<Value> {
  let call: (Value) -> Void
}

/// The observers of a ``Sink`` or ``Variable`` and the serialized delivery of values to them.
///
/// Delivery runs with `lock` held, so deliveries of one subject never overlap and a sender on
/// another thread waits until its value has reached every observer (invariants 1 and 3). The
/// lock is recursive so that an observer may come back in on the same thread; what it then
/// does is decided here, explicitly:
///
/// - `send` during a delivery queues the value (first in, first out) with the key bound of the
///   observers present at that moment; the running delivery drains the queue before it
///   returns, so the value is never delivered nested and nothing is dropped (invariant 2).
/// - `observe` during a delivery appends an observer whose key is past the bound of the value
///   being delivered, so it misses that value (invariant 4).
/// - `dispose` during a delivery removes the observer at once; the delivery checks removals
///   before each call, so the observer gets nothing more (invariant 4).
///
/// Delivery walks a copy-on-write snapshot of the slots, so it allocates nothing; a change made
/// from inside a delivery copies the slots once.
final class SubjectCore<Value>: @unchecked Sendable {
  // Every mutable property below is guarded by `lock`.
  let lock = RecursiveLock()
  private var observers = KeyedStorage<Observer<Value>>()
  private var isDelivering = false
  private var queue = FIFOBuffer<(value: Value, bound: UInt64)>()
  private var isTerminated = false
  /// The value of a ``Variable``; `nil` for a ``Sink``.
  private var current: Value?

  init() {}

  init(current: Value) {
    self.current = current
  }

  // MARK: Sending

  /// Delivers `value` to every observer, or queues it when called from inside a delivery.
  @inline(__always)
  func send(_ value: Value) {
    lock.lock()
    sendLocked(value)
    lock.unlock()
  }

  /// `send` for a caller that holds `lock`.
  @inline(__always)
  private func sendLocked(_ value: Value) {
    if isDelivering {
      queue.append((value, observers.nextKey))
    } else {
      isDelivering = true
      deliver(value, below: observers.nextKey)
      drainQueue()
      isDelivering = false
    }
  }

  /// Delivers queued values until none is left. Called with `lock` held and `isDelivering` set.
  @inline(__always)
  private func drainQueue() {
    while let next = queue.popFirst() {
      deliver(next.value, below: next.bound)
    }
    if observers.slots.count > 2 * observers.count { observers.compactIfNeeded() }
  }

  /// Calls every observer whose key is below `bound` and that is still present.
  @inline(__always)
  private func deliver(_ value: Value, below bound: UInt64) {
    let snapshot = observers.slots
    let removals = observers.removals
    snapshot.withUnsafeBufferPointer { slots in
      for index in slots.indices {
        let key = slots[index].key
        if key >= bound { break }
        guard slots[index].element != nil else { continue }
        if _slowPath(observers.removals != removals), !observers.contains(key) { continue }
        slots[index].element.unsafelyUnwrapped.call(value)
      }
    }
  }

  // MARK: Observing

  /// Adds `observer` and returns its key, or `nil` if the subject has ended.
  func add(_ observer: @escaping (Value) -> Void) -> UInt64? {
    lock.lock()
    defer { lock.unlock() }
    if isTerminated { return nil }
    return observers.insert(Observer(call: observer))
  }

  /// Adds `observer`, then delivers the current value to it first, atomically with respect to
  /// every set. Returns its key, or `nil` if the subject has ended (the observer still gets
  /// the current value once).
  func addReplaying(_ observer: @escaping (Value) -> Void) -> UInt64? {
    lock.lock()
    defer { lock.unlock() }
    let value = current.unsafelyUnwrapped
    let key = isTerminated ? nil : observers.insert(Observer(call: observer))
    if isDelivering {
      observer(value)
    } else {
      isDelivering = true
      observer(value)
      drainQueue()
      isDelivering = false
    }
    return key
  }

  /// Removes the observer under `key`; `false` if it was gone already.
  func remove(_ key: UInt64) -> Bool {
    lock.lock()
    let removed = observers.remove(key)
    if !isDelivering { observers.compactIfNeeded() }
    lock.unlock()
    return removed != nil  // the closure is released here, after the lock
  }

  /// Whether the observer under `key` is still there.
  func contains(_ key: UInt64) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    return observers.contains(key)
  }

  /// The number of observers, for tests and diagnostics.
  var observerCount: Int {
    lock.lock()
    defer { lock.unlock() }
    return observers.count
  }

  /// Ends the subject: removes every observer (releasing them after the lock) and refuses new
  /// ones. Called when the owning ``Sink`` or ``Variable`` is freed.
  func terminate() {
    lock.lock()
    isTerminated = true
    let removed = observers.removeAll()
    lock.unlock()
    _ = removed
  }

  // MARK: Current value

  /// The current value of a ``Variable``.
  var value: Value {
    lock.lock()
    defer { lock.unlock() }
    guard let current else { preconditionFailure(Self.reentrantModify) }
    return current
  }

  /// Sets the current value and delivers it (queued when inside a delivery).
  func set(_ value: Value) {
    lock.lock()
    defer { lock.unlock() }
    precondition(current != nil, Self.reentrantModify)
    current = value
    sendLocked(value)
  }

  /// Changes the current value in place, atomically, and delivers the result once.
  ///
  /// The value is moved out for `body` (no copy, so a copy-on-write payload is changed in
  /// place) and moved back after; `body` must not read or set this variable itself.
  func modify<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    guard var value = current.take() else { preconditionFailure(Self.reentrantModify) }
    defer { if current == nil { current = value } }  // puts the value back if `body` throws
    let result = try body(&value)
    current = value
    sendLocked(value)
    return result
  }

  private static var reentrantModify: String {
    "Flux: a Variable was read or set from inside its own modify(_:) body; "
      + "change the inout argument instead."
  }
}
