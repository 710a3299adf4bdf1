import Dispatch
import FluxCore
import Foundation
import Testing

@Suite("Global dispatch")
struct GlobalDispatchTests {
  enum Instance {}
  enum All {}
  enum Other {}
  enum Churn {}
  enum Creating {}
  enum Weak {}
  enum Order {}
  enum Threads {}
  enum Interleaved {}
  enum Interleaved2 {}
  enum Nested {}

  @Test("inv11: store.actions reaches that store only")
  func inv11_instanceActionsReachOneStore() {
    let first = LogState<Instance>()
    let second = LogState<Instance>()
    let store = Store(state: first, mutations: .init(), executor: .immediate)
    let other = Store(state: second, mutations: .init(), executor: .immediate)
    store.actions.dispatch(action: 1)
    #expect(first.committed.values == [1])
    #expect(second.committed.values.isEmpty)
    withExtendedLifetime(other) {}
  }

  @Test("inv11: Store<S>.actions reaches every live store of S and no other type")
  func inv11_staticActionsReachEveryStoreOfTheType() {
    let states = (0..<5).map { _ in LogState<All>() }
    let stores = states.map { Store(state: $0, mutations: .init(), executor: .immediate) }
    let stranger = LogState<Other>()
    let strangerStore = Store(state: stranger, mutations: .init(), executor: .immediate)
    Store<LogState<All>>.actions.dispatch(action: 42)
    for state in states { #expect(state.committed.values == [42]) }
    #expect(stranger.committed.values.isEmpty)
    withExtendedLifetime((stores, strangerStore)) {}
  }

  @Test("inv11: on every thread, Store<S>.actions reaches the stores live now, created here or elsewhere")
  func inv11_everyThreadReachesStoresCreatedOnAnyThread() {
    let threads = 4
    let rounds = 50
    let states = Recorder<LogState<Threads>>()
    // Each thread looks the type up (first use on that thread), then creates a store, then
    // dispatches; every store is created before every dispatch of the next round.
    for round in 0..<rounds {
      let stores = Recorder<Store<LogState<Threads>>>()
      DispatchQueue.concurrentPerform(iterations: threads) { _ in
        _ = Store<LogState<Threads>>.actions
        let state = LogState<Threads>()
        states.append(state)
        stores.append(Store(state: state, mutations: .init(), executor: .immediate))
      }
      DispatchQueue.concurrentPerform(iterations: threads) { thread in
        Store<LogState<Threads>>.actions.dispatch(action: round * threads + thread)
      }
      for state in states.values.suffix(threads) {
        #expect(Set(state.committed.values) == Set((0..<threads).map { round * threads + $0 }))
      }
      withExtendedLifetime(stores) {}
    }
    #expect(states.values.count == threads * rounds)
  }

  @Test("inv11: global dispatch of one state type never reaches another, on any thread")
  func inv11_threadsCachingSeveralTypesKeepThemApart() {
    let first = LogState<Interleaved>()
    let second = LogState<Interleaved2>()
    let queues = (DispatchQueue(label: "first"), DispatchQueue(label: "second"))
    let stores = (
      Store(state: first, mutations: .init(), executor: .queue(queues.0)),
      Store(state: second, mutations: .init(), executor: .queue(queues.1))
    )
    DispatchQueue.concurrentPerform(iterations: 400) { index in
      if index.isMultiple(of: 2) {
        Store<LogState<Interleaved>>.actions.dispatch(action: index)
      } else {
        Store<LogState<Interleaved2>>.actions.dispatch(action: index)
      }
    }
    stores.0.actions.dispatch(action: -1)
    stores.1.actions.dispatch(action: -1)
    // Every drain was scheduled before these: waiting for the queues waits for the commits.
    queues.0.sync {}
    queues.1.sync {}
    #expect(first.committed.values.filter { $0 >= 0 }.allSatisfy { $0.isMultiple(of: 2) })
    #expect(second.committed.values.filter { $0 >= 0 }.allSatisfy { !$0.isMultiple(of: 2) })
    #expect(first.committed.values.count == 201)
    #expect(second.committed.values.count == 201)
  }

  @Test("inv11: global actions keep dispatch order per store, on each store's executor")
  func inv11_globalOrder() {
    let states = (0..<4).map { _ in LogState<Order>() }
    let stores = states.map { Store(state: $0, mutations: .init(), executor: .queue(.global())) }
    for action in 0..<500 { Store<LogState<Order>>.actions.dispatch(action: action) }
    for state in states {
      #expect(waitUntil { state.committed.values.count == 500 })
      #expect(state.committed.values == Array(0..<500))
    }
    withExtendedLifetime(stores) {}
  }

  @Test("inv10: a global dispatch from an inline commit reaches the rest of the walk before the outer action")
  func inv10_nestedGlobalDispatchOrder() {
    let first = LogState<Nested> { action in
      if action == 1 { Store<LogState<Nested>>.actions.dispatch(action: 2) }
    }
    let second = LogState<Nested>()
    let stores = [first, second].map { Store(state: $0, mutations: .init(), executor: .immediate) }
    Store<LogState<Nested>>.actions.dispatch(action: 1)
    // The first store got 2 during its commit of 1, and commits it next; the walk of 2 reached
    // the second store before the walk of 1 went on to it.
    #expect(first.committed.values == [1, 2])
    #expect(second.committed.values == [2, 1])
    withExtendedLifetime(stores) {}
  }

  @Test("inv11: stores created and freed during global dispatch neither crash nor get half an action")
  func inv11_churnDuringGlobalDispatch() {
    let standing = (0..<8).map { _ in LogState<Churn>() }
    let standingStores = standing.map { Store(state: $0, mutations: .init(), executor: .immediate) }
    let churned = Recorder<LogState<Churn>>()
    let dispatches = 2_000
    race(threads: 3, iterations: dispatches) { thread, index in
      if thread == 0 {
        Store<LogState<Churn>>.actions.dispatch(action: index)
      } else {
        let state = LogState<Churn>()
        churned.append(state)
        let store = Store(state: state, mutations: .init(), executor: .immediate)
        withExtendedLifetime(store) {}
      }
    }
    for state in standing { #expect(state.committed.values == Array(0..<dispatches)) }
    for state in churned.values {
      let seen = state.committed.values
      #expect(Set(seen).count == seen.count, "a churned store got an action twice")
      #expect(seen == seen.sorted(), "a churned store got actions out of order")
    }
    withExtendedLifetime(standingStores) {}
  }

  @Test("inv11: a store created by a mutation during a global dispatch gets all of it or none")
  func inv11_storeCreatedDuringGlobalDispatch() {
    let created = Recorder<LogState<Creating>>()
    let keep = Box<[Store<LogState<Creating>>]>([])
    let first = LogState<Creating> { action in
      let state = LogState<Creating>()
      created.append(state)
      keep.value.append(Store(state: state, mutations: .init(), executor: .immediate))
    }
    let store = Store(state: first, mutations: .init(), executor: .immediate)
    Store<LogState<Creating>>.actions.dispatch(action: 1)
    #expect(first.committed.values == [1])
    for state in created.values { #expect(state.committed.values.count <= 1) }
    withExtendedLifetime(store) {}
  }

  enum Nest<Inner> {}
  enum Root0 {}
  enum Root1 {}
  enum Root2 {}
  enum Root3 {}

  @Test("inv11: each of 320 state types, made on 4 threads at once, reaches its own stores only")
  func inv11_manyStateTypesAtOnce() {
    let results = Recorder<Bool>()
    runOnThreads(4) { thread in
      // Each thread makes state types of its own, one deeper than the last, while the others
      // make theirs: the lookups of each race the registrations of the others.
      switch thread {
      case 0: results.append(Self.climb(Nest<Root0>.self, depth: 80))
      case 1: results.append(Self.climb(Nest<Root1>.self, depth: 80))
      case 2: results.append(Self.climb(Nest<Root2>.self, depth: 80))
      default: results.append(Self.climb(Nest<Root3>.self, depth: 80))
      }
    }
    #expect(results.values == [true, true, true, true])
  }

  /// Makes a store of `LogState<Tag>` and dispatches to its type, then does the same `depth - 1`
  /// types deeper, then dispatches again; whether the store got exactly its two actions, at
  /// every depth.
  static func climb<Tag>(_ tag: Tag.Type, depth: Int) -> Bool {
    guard depth > 0 else { return true }
    let state = LogState<Tag>()
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    Store<LogState<Tag>>.actions.dispatch(action: depth)
    let deeper = climb(Nest<Tag>.self, depth: depth - 1)
    Store<LogState<Tag>>.actions.dispatch(action: -depth)
    withExtendedLifetime(store) {}
    return deeper && state.committed.values == [depth, -depth]
  }

  @Test("inv8: the global dispatcher never keeps a store alive")
  func inv8_registryHoldsStoresWeakly() {
    weak var weakStore: Store<LogState<Weak>>?
    let state = LogState<Weak>()
    do {
      let store = Store(state: state, mutations: .init(), executor: .immediate)
      weakStore = store
      Store<LogState<Weak>>.actions.dispatch(action: 1)
    }
    #expect(weakStore == nil)
    Store<LogState<Weak>>.actions.dispatch(action: 2)
    #expect(state.committed.values == [1])
  }
}

/// A state of stores that log their commits elsewhere: a commit never touches the state.
final class NamedState<Tag>: State {
  typealias Action = Int
  typealias Mutations = NamedMutations<Tag>

  let flag: DeallocFlag

  init(_ flag: DeallocFlag = DeallocFlag()) {
    self.flag = flag
  }

  deinit { flag.markFreed() }
}

/// Logs "name action" for each commit, then runs `after`.
struct NamedMutations<Tag>: Mutations {
  let name: String
  let log: Recorder<String>
  var after: (@Sendable () -> Void)?

  func commit(action: Int, state: NamedState<Tag>) {
    log.append("\(name) \(action)")
    after?()
  }
}

extension GlobalDispatchTests {
  enum Later {}
  enum FreedInWalk {}

  @Test("inv11: a store created after a global dispatch receives the next one")
  func inv11_storeCreatedBetweenGlobalDispatchesReceivesTheNext() {
    let first = LogState<Later>()
    let store = Store(state: first, mutations: .init(), executor: .immediate)
    Store<LogState<Later>>.actions.dispatch(action: 1)
    let second = LogState<Later>()
    let later = Store(state: second, mutations: .init(), executor: .immediate)
    Store<LogState<Later>>.actions.dispatch(action: 2)
    #expect(first.committed.values == [1, 2])
    #expect(second.committed.values == [2], "a store registered after a global dispatch was left out of the next")
    withExtendedLifetime((store, later)) {}
  }

  @Test(
    "inv11: a store freed by an earlier store's commit during a global dispatch gets none of it, and nothing breaks")
  func inv11_storeFreedDuringTheWalkGetsNoneOfIt() {
    typealias S = NamedState<FreedInWalk>
    let log = Recorder<String>()
    let victim = Box<Store<S>?>(nil)
    let first = Store(
      state: S(), mutations: .init(name: "first", log: log) { victim.value = nil }, executor: .immediate)
    let victimState = DeallocFlag()
    // Registered last, so it is the newest entry of the registry when it goes.
    victim.value = Store(state: S(victimState), mutations: .init(name: "victim", log: log), executor: .immediate)
    Store<S>.actions.dispatch(action: 1)
    #expect(victim.value == nil)
    #expect(victimState.isFreed)
    Store<S>.actions.dispatch(action: 2)
    #expect(log.values == ["first 1", "first 2"], "a store freed before the walk reached it committed there")
    withExtendedLifetime(first) {}
  }
}
