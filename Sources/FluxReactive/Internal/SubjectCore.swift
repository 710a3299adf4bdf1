import FluxCore

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Glibc
  import Synchronization
#endif

/// An observer closure in a one-field struct, stored in the slots of a ``SubjectCore``.
@usableFromInline
struct Observer<Value> {
  @usableFromInline
  let call: (Value) -> Void

  @inlinable
  init(call: @escaping (Value) -> Void) {
    self.call = call
  }
}

/// Observers that a locked section took out of a ``SubjectCore`` (all of them, when the subject
/// ended during its delivery), for the caller to release with the lock:
/// `lock.unlock(releasing: taken)` frees them after it (invariant 16). `nil`, the common case,
/// costs one word and one branch.
@usableFromInline
typealias TakenObservers<Value> = ContiguousArray<KeyedStorage<Observer<Value>>.Slot>?

/// The value lock of every ``Sink``'s core: a sink has no value, so nobody takes it.
private let unusedValueLock = Lock()

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
/// - `dispose` during a delivery empties the observer's slot at once; the delivery reads each
///   slot just before calling it, so the observer gets nothing more (invariant 4).
///
/// A ``Variable``'s value has a lock of its own, `valueLock`, so that reading it never waits for
/// a delivery on another thread (invariant 3: two variables whose observers read each other's
/// value never deadlock). `current` changes only with both locks held, `lock` first: every
/// change is made inside the delivery turn, so changes are delivered (or queued, from inside a
/// delivery) in the order they were made, and `addReplaying`, holding `lock`, reads a value that
/// no set can change before the new observer is in (invariant 5). A reader takes `valueLock`
/// alone, for a copy. `modify` keeps `valueLock` while its body runs, so a reader on another
/// thread gets the value before or after the change, never a half-made one. `valueLock` is a
/// plain lock (a recursive one costs a third more per set); a read, set or `modify` from inside
/// a `modify` body, on the same thread, is recognised through `lock` instead, which that thread
/// holds: there `current` is `nil` (moved out), and a fatal error names the mistake rather
/// than deadlock.
///
/// Delivery walks the live slots by position: during a delivery slots are only appended,
/// emptied or dropped from the end, never moved (``KeyedStorage`` compacts only when the
/// delivery is over), so nothing is copied and nothing allocated. Each observer is copied out
/// of its slot for its call, which keeps its closure alive if it disposes itself meanwhile.
///
/// On Linux, a value of one word or less that holds no references (an `Int`, a `Bool`, a small
/// enum) skips `valueLock`: every change also stores its bits in an atomic word, which readers
/// load without any lock (``usesWord``). A set then takes one lock, like a sink's send.
///
/// `send`, `set`, `modify`, `add` and `remove` are `@inlinable`: specialized in the caller, a
/// send is a lock, a loop and an unlock, with no generic metadata lookups (the benchmarks'
/// W1–W6). The rare paths (queueing, draining, compaction) stay behind non-inlinable calls.
/// Disposal arrives through `any Disposable`, whose witness is unspecialized generic code, so
/// the core carries `specializedRemove`: `remove(_:)` as compiled where the core was made (the
/// `@inlinable` initializers of ``Sink`` and ``Variable``): generic, a disposal spends most of
/// its time looking up metadata (W5: about 600 ns per subscribe-dispose pair against 80).
///
/// `@unchecked Sendable` for any value, since the disposables of its observations hold it and
/// any thread may free them: its locks guard its state (below), and a value that is not
/// `Sendable` never goes with it, since the value's ``ValueOwner`` lets go of it in the
/// value's own domain (and a set, in the setter's).
@usableFromInline
final class SubjectCore<Value>: @unchecked Sendable {
  // Every mutable property below is guarded by `lock`, which serializes every access; they opt
  // out of the dynamic exclusivity check, which would otherwise cost a runtime call per access
  // on the delivery path.
  @usableFromInline
  let lock = RecursiveLock()
  @usableFromInline
  @exclusivity(unchecked) var observers = KeyedStorage<Observer<Value>>()
  @usableFromInline
  @exclusivity(unchecked) var isDelivering = false
  /// Set when the running delivery has work left for its end: queued values, or emptied slots
  /// to compact.
  @usableFromInline
  @exclusivity(unchecked) var hasPendingWork = false
  @exclusivity(unchecked) private var queue = FIFOBuffer<(value: Value, bound: UInt64)>()
  @usableFromInline
  @exclusivity(unchecked) var isTerminated = false
  /// Guards `current` for readers; a sink, which has no value, shares one lock it never takes.
  /// Not optional, so that taking it costs no retain and release on the hot paths.
  @usableFromInline
  let valueLock: Lock
  /// The value of a ``Variable``; `nil` for a ``Sink``, and while `modify` runs its body.
  /// Changed only with `lock` and `valueLock` held; read with either.
  @usableFromInline
  @exclusivity(unchecked) var current: Value?
  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    /// For a value of one word or less with no references (``usesWord``): its bits, stored with
    /// release ordering after every change of `current`, which happens with `lock` held, and
    /// loaded with acquire ordering by readers, which take no lock at all.
    @usableFromInline
    let word = Atomic<UInt64>(0)
    /// The thread running this variable's `modify` body, or 0: written only by that thread,
    /// before and after the body, so a reader that finds its own id there is inside the body.
    @usableFromInline
    let modifyingThread = Atomic<UInt>(0)
    /// Observation's registrar for the value, made by the first read (`SubjectCore+Observation`):
    /// the address of one retain of it, or 0 until then, so a set that nobody read pays one load
    /// and one branch. Set once, by a compare-and-exchange from 0; released in `deinit`.
    @usableFromInline
    let observation = Atomic<UInt>(0)
  #else
    /// Observation's registrar for `current`, made by the first read (`SubjectCore+Observation`);
    /// `nil` until then, so a set that nobody read pays one load and one branch. Written once,
    /// under `valueLock`; read under `valueLock`.
    @usableFromInline
    @exclusivity(unchecked) var observation: AnyObject?
  #endif
  /// Whether Observation's `willSet` for this value is running (its trackers' `onChange`), on
  /// the thread that holds `lock`. Guarded by `lock`.
  @usableFromInline
  @exclusivity(unchecked) var isNotifyingObservation = false
  /// `remove(_:)`, compiled (and so specialized) where this core was made.
  @usableFromInline
  let specializedRemove: (SubjectCore<Value>, UInt64) -> Bool

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    deinit {
      let registration = observation.load(ordering: .acquiring)
      if registration != 0 {
        Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: registration).unsafelyUnwrapped).release()
      }
    }
  #endif

  /// Creates the core of a ``Sink``. An `@inlinable` caller passes `{ $0.remove($1) }`, which
  /// compiles `remove(_:)` there.
  @usableFromInline
  init(remove: @escaping (SubjectCore<Value>, UInt64) -> Bool = { $0.remove($1) }) {
    valueLock = unusedValueLock
    specializedRemove = remove
  }

  /// Creates the core of a ``Variable`` or ``Constant``, holding `current`.
  @usableFromInline
  init(current: Value, remove: @escaping (SubjectCore<Value>, UInt64) -> Bool = { $0.remove($1) }) {
    self.current = current
    valueLock = Lock()
    specializedRemove = remove
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      if Self.usesWord { word.store(Self.bits(of: current), ordering: .releasing) }
    #endif
  }

  // MARK: Sending

  /// Delivers `value` to every observer, or queues it when called from inside a delivery.
  @inlinable
  func send(_ value: Value) {
    lock.lock()
    let taken = sendLocked(value)
    lock.unlock(releasing: taken)
  }

  /// `send` for a caller that holds `lock`. Returns the observers that the delivery let go of,
  /// for the caller to release with the lock (`lock.unlock(releasing:)`).
  @inlinable
  func sendLocked(_ value: Value) -> TakenObservers<Value> {
    if _slowPath(isDelivering) {
      enqueue(value)
      return nil
    }
    isDelivering = true
    deliver(value, below: observers.nextKey)
    let taken = _slowPath(hasPendingWork) ? finishDelivery() : nil
    isDelivering = false
    return taken
  }

  /// Calls every observer whose key is below `bound` and whose slot is still filled.
  ///
  /// The loop walks a copy of the slots: one reference on the array's buffer keeps every
  /// observer alive until the delivery ends, so an observer is borrowed for its call, not
  /// retained and released (an observer that disposes itself, or others, frees nothing under
  /// the running call). A change to the live slots during the delivery copies them once (copy
  /// on write), which costs no more than the delivery itself. Only after a removal during a
  /// delivery (`hasPendingWork`) does the loop consult the live slots, so a disposed observer
  /// gets nothing more (invariant 4).
  ///
  /// The observers added since `bound` was taken are the last slots of the copy, since keys
  /// only increase: the loop stops before the first of them, found once. A send's own delivery
  /// takes its bound and its copy together, so it reaches every slot of the copy with no search;
  /// only a queued value, whose bound is older, needs the binary search.
  @inlinable
  func deliver(_ value: Value, below bound: UInt64) {
    let slots = observers.slots
    let end = bound == observers.nextKey ? slots.count : KeyedStorage.lowerBound(of: bound, in: slots)
    var index = 0
    while index < end {
      if _fastPath(!hasPendingWork) || observers.holds(slots[index].key, at: index) {
        // Optional chaining borrows the element in place; `if let` would copy (retain) it.
        slots[index].element?.call(value)
      }
      index &+= 1
    }
  }

  /// Queues `value` for the running delivery, with the bound of the observers present now.
  @usableFromInline
  func enqueue(_ value: Value) {
    queue.append((value, observers.nextKey))
    hasPendingWork = true
  }

  /// Delivers queued values until none is left, then compacts. Called with `lock` held and
  /// `isDelivering` set. Returns the observers of a subject ended during the delivery, for the
  /// caller to release after the lock.
  @usableFromInline
  func finishDelivery() -> TakenObservers<Value> {
    while let next = queue.popFirst() {
      deliver(next.value, below: next.bound)
    }
    hasPendingWork = false
    if _slowPath(isTerminated) {
      // Ended from inside this delivery (see `terminate()`): its observers go now, as an
      // observer disposed during a delivery does when the delivery ends, after the lock.
      return observers.removeAll()
    }
    observers.compactIfNeeded()
    return nil
  }

  // MARK: Observing

  /// Adds `observer` and returns its key, or `nil` if the subject has ended.
  @inlinable
  func add(_ observer: @escaping @Sendable (Value) -> Void) -> UInt64? {
    lock.lock()
    defer { lock.unlock() }
    if isTerminated { return nil }
    return observers.insert(Observer(call: observer))
  }

  /// Adds `observer`, then delivers the current value to it first, atomically with respect to
  /// every set. Returns its key, or `nil` if the subject has ended (the observer still gets
  /// the current value once).
  @usableFromInline
  func addReplaying(_ observer: @escaping @Sendable (Value) -> Void) -> UInt64? {
    lock.lock()
    // Read under `lock`, which every change holds too.
    guard let value = current else { Self.observedInsideModify() }
    let key = isTerminated ? nil : observers.insert(Observer(call: observer))
    var taken: TakenObservers<Value> = nil
    if isDelivering {
      observer(value)
    } else {
      isDelivering = true
      observer(value)
      taken = finishDelivery()
      isDelivering = false
    }
    lock.unlock(releasing: taken)
    return key
  }

  /// Removes the observer under `key`; `false` if it was gone already.
  @inlinable
  func remove(_ key: UInt64) -> Bool {
    lock.lock()
    let removed = removeLocked(key)
    let wasThere = removed != nil
    lock.unlock(releasing: removed)
    return wasThere
  }

  /// `remove(_:)` if no other thread holds `lock` (delivering, most likely); `false`, doing
  /// nothing, if one does and removing would wait for it.
  func removeWithoutWaiting(_ key: UInt64) -> Bool {
    guard lock.tryLock() else { return false }
    let removed = removeLocked(key)
    lock.unlock(releasing: removed)
    return true
  }

  /// Empties the slot of `key`, with `lock` held; returns its observer, for the caller to
  /// release after the lock.
  @inlinable
  func removeLocked(_ key: UInt64) -> Observer<Value>? {
    let removed = observers.remove(key)
    if isDelivering {
      hasPendingWork = true  // compact when the delivery is over
    } else {
      observers.compactIfNeeded()
    }
    return removed
  }

  /// Whether the observer under `key` is still there.
  @usableFromInline
  func contains(_ key: UInt64) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    return observers.contains(key)
  }

  /// Whether the observer under `key` is still there, or `nil` if another thread holds the lock
  /// (delivering, most likely) and the answer would wait for it.
  func containsWithoutWaiting(_ key: UInt64) -> Bool? {
    guard lock.tryLock() else { return nil }
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
  /// ones; from inside its own delivery, once that delivery ends. Called when the owning
  /// ``Sink`` or ``Variable`` is freed.
  func terminate() {
    lock.lock()
    isTerminated = true
    if isDelivering {
      // Freed from inside its own delivery, on this thread (another would wait for the lock
      // until the delivery ends). The values queued before reach every observer there was, so
      // that all see the same values (rule 2); the delivery removes them once it ends.
      hasPendingWork = true
      lock.unlock()
      return
    }
    let removed = observers.removeAll()
    lock.unlock(releasing: removed)
  }

  // MARK: Current value

  /// The current value of a ``Variable``. Waits for a running `modify` body (except for a value
  /// in a word, ``usesWord``), never for a delivery.
  @inlinable
  var value: Value {
    read(tracked: true)
  }

  /// The current value for a change in place (`Variable.value`'s `_modify`): a copy, read as
  /// ``value`` reads it, except that a change is not a read for Observation.
  @inlinable
  var valueForChange: Value {
    read(tracked: false)
  }

  /// The current value; when `tracked`, a read for Observation too.
  @inlinable
  @inline(__always)
  func read(tracked: Bool) -> Value {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      if Self.usesWord { return wordValue(tracked: tracked) }
    #endif
    if _slowPath(!valueLock.tryLock()) { waitForValueLock() }
    defer { valueLock.unlock() }
    guard let current else { Self.reentrantModify() }
    if tracked { valueWasRead() }
    return current
  }

  /// Takes `valueLock`, which someone holds: a reader on another thread for a moment, a
  /// `modify` body on another thread, or one on this thread (then this stops with a message).
  @usableFromInline
  func waitForValueLock() {
    // `lock` is held around every `modify` body: if this thread can take it while the value is
    // moved out, the body running is this thread's own.
    if lock.tryLock() {
      let isOwnModify = current == nil
      lock.unlock()
      if isOwnModify { Self.reentrantModify() }
    }
    valueLock.lock()
  }

  /// Starts a change of `current`, with `lock` held: stops a change from inside this thread's
  /// `modify` body, tells Observation's trackers (before the change, outside `valueLock`), and
  /// takes `valueLock`. Returns whether Observation must hear of the end of the change too.
  @inlinable
  func beginChange() -> Bool {
    if _slowPath(current == nil) { Self.reentrantModify() }  // inside this thread's `modify` body
    valueLock.lock()
    let isObserved = isObserved  // read under `valueLock`, which guards it where it is not atomic
    if _slowPath(isObserved) {
      valueLock.unlock()
      valueWillChange()
      valueLock.lock()
    }
    return isObserved
  }

  /// Sets the current value and delivers it (queued when inside a delivery). The old value is
  /// released after both locks.
  @inlinable
  func set(_ value: Value) {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      if Self.usesWord { return wordSet(value) }
    #endif
    lock.lock()
    let isObserved = beginChange()
    let old = current.take()
    current = value
    valueLock.unlock()
    if _slowPath(isObserved) { valueDidChange() }
    let taken = sendLocked(value)
    lock.unlock(releasing: (old, taken))
  }

  @usableFromInline
  static func reentrantModify() -> Never {
    fatalError(
      "Flux: a Variable was read or set from inside its own modify(_:) body; "
        + "change the inout argument instead.")
  }

  @usableFromInline
  static func observedInsideModify() -> Never {
    fatalError(
      "Flux: a Variable was observed from inside its own modify(_:) body; "
        + "observe it before or after modify(_:).")
  }
}
