import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The cheapest correct code for each workload: observers in a `ContiguousArray` of one-field
/// closure structs, one round trip of the cheapest correct lock per send (``BaselineLock``: one
/// compare-and-exchange to take it, one releasing store to give it back, inline), delivery in a
/// plain loop over a copy of the array (so no observer is retained for its call). No reentrancy
/// handling, no generic layers.
enum BaselineWorkloads {
  static func prepare(_ workload: Workload, tally: Tally) -> Prepared {
    switch workload {
    case .w1: return sends(observers: 1, tally: tally)
    case .w2: return sends(observers: 10, tally: tally)
    case .w3: return variableSets(tally: tally)
    case .w3o: return trackedVariableSets(tally: tally)
    case .w4: return mapChain(tally: tally)
    case .w5: return churn(tally: tally)
    case .w6, .w10: return storeDispatch(tally: tally)
    case .w7: return globalDispatch(tally: tally)
    case .w8: return contention(tally: tally)
    case .w9: preconditionFailure("W9 runs through memory(tally:)")
    case .w11: return sends(observers: 1, tally: tally)
    // The target of a global dispatch to one store is the store's own kept `store.actions`.
    case .w12: return FluxWorkloads.keptStoreActions(tally: tally)
    // The idiomatic store's limit is the plain store's; W3m's, a variable's get and set.
    case .w6i, .w10i, .w12i: return storeDispatch(tally: tally)
    case .w3m: return variableAdds(tally: tally)
    case .w3r: return variableSetsAfterRead(tally: tally)
    case .w15: return arrayAppends(tally: tally)
    case .w16: return arrayRemovals(tally: tally)
    case .w17: return todoStore(tally: tally)
    case .w18: return stringAppends(tally: tally)
    case .w13, .w14: return LogWorkloads.unlogged(tally: tally)  // the log's cost: the same store, unlogged
    }
  }

  static func sends(observers: Int, tally: Tally) -> Prepared {
    let sink = BaselineSink()
    for _ in 0..<observers {
      _ = sink.add { tally.add($0) }
    }
    return Prepared(
      run: { range in
        for value in range { sink.send(value) }
      },
      expected: { sum($0) &* observers }
    )
  }

  private static func variableSets(tally: Tally) -> Prepared {
    let variable = BaselineVariable(0)
    variable.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { variable.set(value) }
      },
      expected: { sum($0) }
    )
  }

  private static func variableAdds(tally: Tally) -> Prepared {
    let variable = BaselineVariable(0)
    variable.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for _ in range { variable.add(1) }
      },
      expected: { sum($0) { $0 &+ 1 } }
    )
  }

  private static func mapChain(tally: Tally) -> Prepared {
    let sink = BaselineSink()
    let observer: (Int) -> Void = { tally.add($0) }
    _ = sink.add(map(map(map(observer) { $0 &- 3 }) { $0 &* 2 }) { $0 &+ 1 })
    return Prepared(
      run: { range in
        for value in range { sink.send(value) }
      },
      expected: { sum($0) { ($0 &+ 1) &* 2 &- 3 } }
    )
  }

  /// An observer of values that passes each through `transform` to `observer`.
  private static func map(
    _ observer: @escaping (Int) -> Void,
    _ transform: @escaping (Int) -> Int
  ) -> (Int) -> Void {
    { observer(transform($0)) }
  }

  private static func churn(tally: Tally) -> Prepared {
    let sink = BaselineSink()
    for _ in 0..<Workload.standingObservers {
      _ = sink.add { tally.add($0) }
    }
    return churn(on: sink, keeping: (), count: Workload.standingObservers, tally: tally)
  }

  /// W5 and the subscribe + dispose curve: each index adds an observer to `sink` and removes
  /// it, beside the `count` standing observers (whose keys `standing` keeps).
  static func churn(on sink: BaselineSink, keeping standing: some Any, count: Int, tally: Tally) -> Prepared {
    Prepared(
      run: { range in
        for _ in range {
          let key = sink.add { tally.add($0) }
          sink.remove(key)
        }
      },
      expected: { _ in 0 },
      finish: {
        withExtendedLifetime(standing) { sink.send(7) }
        return 7 &* count
      }
    )
  }

  private static func storeDispatch(tally: Tally) -> Prepared {
    let store = BaselineStore(state: 0) { state, _ in state &+ 1 }
    store.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { store.dispatch(value) }
      },
      expected: { sum($0) { $0 &+ 1 } }
    )
  }

  private static func globalDispatch(tally: Tally) -> Prepared {
    globalDispatch(to: Workload.globalStores, tally: tally)
  }

  /// W7 and the global-dispatch curve: each index reaches `stores` stores of one registry.
  static func globalDispatch(to stores: Int, tally: Tally) -> Prepared {
    let registry = BaselineRegistry()
    for _ in 0..<stores {
      registry.add(
        BaselineStore(state: 0) { state, action in
          tally.add(action)
          return state
        })
    }
    return Prepared(
      run: { range in
        for value in range { registry.dispatch(value) }
      },
      expected: { sum($0) &* stores }
    )
  }

  private static func contention(tally: Tally) -> Prepared {
    let sink = BaselineSink()
    _ = sink.add { tally.add($0) }
    return Prepared(
      run: { range in
        onTwoThreads(range) { part in
          for value in part { sink.send(value) }
        }
      },
      expected: { sum($0) }
    )
  }

  static func memory(tally: Tally) -> MemoryWorkload {
    let sink = BaselineSink()
    var holder: Holder<UInt64>?
    return MemoryWorkload(
      reserve: { holder = Holder(capacity: $0) },
      subscribe: { count in
        let holder = holder!
        for _ in 0..<count {
          holder.append(sink.add { tally.add($0) })
        }
      },
      send: { sink.send($0) },
      release: { holder = nil }
    )
  }
}

/// A closure in a one-field struct.
private struct BaselineObserver {
  let call: (Int) -> Void
}

/// Calls every observer with `value`, in order.
///
/// `observers` is the caller's own copy of the array (one reference count on its buffer), so
/// each element is borrowed from storage that nothing can change during the loop: no observer
/// is retained or released for its call. Reading the elements through a class property or an
/// `UnsafeBufferPointer` instead costs a retain and a release per observer, which is most of
/// the time of a send to 10 observers.
@inline(__always)
private func deliver(_ value: Int, to observers: ContiguousArray<BaselineObserver>) {
  var index = 0
  while index < observers.count {
    observers[index].call(value)
    index &+= 1
  }
}

/// The cheapest correct lock: one compare-and-exchange with acquiring order to take it, one store
/// with releasing order to give it back, both inline. A thread that finds it taken yields and
/// tries again: correct, not fair, and never taken in the single-threaded workloads.
final class BaselineLock: @unchecked Sendable {
  private let word = Atomic<UInt32>(0)

  @inline(__always)
  func lock() {
    if _fastPath(word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged) { return }
    lockContended()
  }

  @inline(never)
  private func lockContended() {
    while !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
      sched_yield()
    }
  }

  @inline(__always)
  func unlock() { word.store(0, ordering: .releasing) }
}

/// Observers under increasing keys; sends deliver under the lock, so they are serialized.
final class BaselineSink: @unchecked Sendable {
  // Guarded by `mutex`.
  private let mutex = BaselineLock()
  private var keys = ContiguousArray<UInt64>()
  private var observers = ContiguousArray<BaselineObserver>()
  private var nextKey: UInt64 = 0

  func add(_ observer: @escaping (Int) -> Void) -> UInt64 {
    mutex.lock()
    defer { mutex.unlock() }
    let key = nextKey
    nextKey += 1
    keys.append(key)
    observers.append(BaselineObserver(call: observer))
    return key
  }

  /// Binary search, then removal; the shift is O(1) for the newest observer, as in W5.
  func remove(_ key: UInt64) {
    mutex.lock()
    var low = 0
    var high = keys.count
    while low < high {
      let middle = (low + high) / 2
      if keys[middle] < key { low = middle + 1 } else { high = middle }
    }
    var removed: BaselineObserver?
    if low < keys.count, keys[low] == key {
      keys.remove(at: low)
      removed = observers.remove(at: low)
    }
    mutex.unlock()
    _ = removed
  }

  @inline(__always)
  func send(_ value: Int) {
    mutex.lock()
    deliver(value, to: observers)
    mutex.unlock()
  }
}

/// A value and its observers: a set stores and delivers under the lock.
private final class BaselineVariable {
  // Guarded by `mutex`.
  private let mutex = BaselineLock()
  private var value: Int
  private var observers = ContiguousArray<BaselineObserver>()

  init(_ value: Int) {
    self.value = value
  }

  func observe(_ observer: @escaping (Int) -> Void) {
    mutex.lock()
    observers.append(BaselineObserver(call: observer))
    observer(value)
    mutex.unlock()
  }

  @inline(__always)
  func set(_ newValue: Int) {
    mutex.lock()
    value = newValue
    deliver(newValue, to: observers)
    mutex.unlock()
  }

  /// `value += amount` as a get and a set (rule 20): a change in place may span a suspension,
  /// so no lock is held from the get to the set.
  @inline(__always)
  func add(_ amount: Int) {
    mutex.lock()
    let current = value
    mutex.unlock()
    mutex.lock()
    value = current &+ amount
    deliver(value, to: observers)
    mutex.unlock()
  }
}

/// A store: lock, reduce, unlock, notify.
private final class BaselineStore {
  // Guarded by `mutex`.
  private let mutex = BaselineLock()
  private var state: Int
  private var observers = ContiguousArray<BaselineObserver>()
  private let reduce: (Int, Int) -> Int

  init(state: Int, reduce: @escaping (Int, Int) -> Int) {
    self.state = state
    self.reduce = reduce
  }

  func observe(_ observer: @escaping (Int) -> Void) {
    mutex.lock()
    observers.append(BaselineObserver(call: observer))
    let current = state
    mutex.unlock()
    observer(current)
  }

  @inline(__always)
  func dispatch(_ action: Int) {
    mutex.lock()
    state = reduce(state, action)
    let current = state
    let observers = self.observers
    mutex.unlock()
    deliver(current, to: observers)
  }
}

/// The stores that a global action reaches: a snapshot taken under the lock, then each store.
private final class BaselineRegistry {
  // Guarded by `mutex`.
  private let mutex = BaselineLock()
  private var stores = ContiguousArray<BaselineStore>()

  func add(_ store: BaselineStore) {
    mutex.lock()
    stores.append(store)
    mutex.unlock()
  }

  func dispatch(_ action: Int) {
    mutex.lock()
    let stores = self.stores
    mutex.unlock()
    var index = 0
    while index < stores.count {
      stores[index].dispatch(action)
      index &+= 1
    }
  }
}
