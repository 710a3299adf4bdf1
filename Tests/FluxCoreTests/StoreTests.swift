import Dispatch
import FluxCore
import Foundation
import Testing

@Suite("Store")
struct StoreTests {
  enum Only {}
  enum Overlap {}
  enum Order {}
  enum Reentrant {}
  enum CrossThread {}
  enum Cancel {}
  enum Alive {}
  enum Freed {}
  enum Kept {}
  enum Midway {}
  enum Stalled {}
  enum Release {}

  @Test("inv9: state changes only by committing a dispatched action")
  func inv9_onlyCommitChangesState() {
    let manual = ManualExecutor()
    let state = LogState<Only>()
    let store = Store(state: state, mutations: .init(), executor: manual.executor)
    #expect(state.committed.values.isEmpty)
    store.actions.dispatch(action: 7)
    #expect(state.committed.values.isEmpty, "the commit waits for the executor")
    manual.drain()
    #expect(state.committed.values == [7])
    #expect(store.computed.state === state)
  }

  @Test("inv10: commits never overlap and keep per-thread order on a concurrent queue")
  func inv10_noOverlapOnConcurrentQueue() {
    let state = LogState<Overlap>()
    let store = Store(state: state, mutations: .init(), executor: .queue(.global()))
    let threads = 4
    let perThread = 2_000
    race(threads: threads, iterations: perThread) { thread, index in
      store.actions.dispatch(action: thread * 1_000_000 + index)
    }
    #expect(waitUntil { state.committed.values.count == threads * perThread })
    #expect(state.overlapCount == 0)
    let committed = state.committed.values
    for thread in 0..<threads {
      let mine = committed.filter { $0 / 1_000_000 == thread }.map { $0 % 1_000_000 }
      #expect(mine == Array(0..<perThread), "thread \(thread)'s actions were committed out of order")
    }
  }

  @Test("inv10: commits run in dispatch order on every executor", arguments: ["immediate", "main", "global", "serial"])
  func inv10_dispatchOrder(executorName: String) {
    let executor: Executor =
      switch executorName {
      case "immediate": .immediate
      case "main": .mainThread
      case "global": .queue(.global())
      default: .queue(DispatchQueue(label: "serial"))
      }
    let state = LogState<Order>()
    let store = Store(state: state, mutations: .init(), executor: executor)
    for action in 0..<1_000 { store.actions.dispatch(action: action) }
    #expect(waitUntil { state.committed.values.count == 1_000 })
    #expect(state.committed.values == Array(0..<1_000))
  }

  @Test(
    "inv10: a dispatch from a mutation runs after that commit; on .immediate before the outer dispatch returns",
    arguments: [true, false])
  func inv10_reentrantDispatch(immediate: Bool) {
    let events = Recorder<String>()
    let actions = Box<Actions<LogState<Reentrant>>?>(nil)
    let state = LogState<Reentrant> { action in
      events.append("begin \(action)")
      if action < 3 { actions.value?.dispatch(action: action + 1) }
      events.append("end \(action)")
    }
    let store = Store(state: state, mutations: .init(), executor: immediate ? .immediate : .queue(.global()))
    actions.value = store.actions
    store.actions.dispatch(action: 1)
    if immediate {
      #expect(events.values.count == 6, "the queued dispatches ran after the outer dispatch returned")
    }
    #expect(waitUntil { events.values.count == 6 })
    #expect(events.values == ["begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3"])
    #expect(state.overlapCount == 0)
  }

  @Test("inv10: dispatches from other threads during an immediate commit are serialized")
  func inv10_crossThreadImmediate() {
    let state = LogState<CrossThread>()
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    race(threads: 4, iterations: 2_000) { thread, index in
      store.actions.dispatch(action: thread * 1_000_000 + index)
    }
    #expect(state.committed.values.count == 8_000)
    #expect(state.overlapCount == 0)
  }

  @Test("inv12: commits still queued when the store is freed never run")
  func inv12_freedStoreCancelsQueuedCommits() {
    let manual = ManualExecutor()
    let state = LogState<Cancel>()
    var store: Store<LogState<Cancel>>? = Store(state: state, mutations: .init(), executor: manual.executor)
    weak let weakStore = store
    store?.actions.dispatch(action: 1)
    store?.actions.dispatch(action: 2)
    store = nil
    #expect(weakStore == nil, "queued work kept the store alive")
    manual.drain()
    #expect(state.committed.values.isEmpty)
  }

  @Test("inv12: queued work never keeps a store, its state or its mutations alive")
  func inv12_queuedWorkDoesNotRetain() {
    let manual = ManualExecutor()
    let flag = DeallocFlag()
    do {
      let state = LogState<Alive>()
      state.hook = { [tracked = Tracked(flag)] _ in _ = tracked }
      let store = Store(state: state, mutations: .init(), executor: manual.executor)
      store.actions.dispatch(action: 1)
    }
    #expect(manual.pendingCount == 1)
    #expect(flag.isFreed, "the state outlived its store")
    manual.drain()
  }

  @Test("actions kept after the store is freed do nothing")
  func actionsAfterStoreFreed() {
    let state = LogState<Freed>()
    var store: Store<LogState<Freed>>? = Store(state: state, mutations: .init(), executor: .immediate)
    let actions = store!.actions
    actions.dispatch(action: 1)
    store = nil
    actions.dispatch(action: 2)
    #expect(state.committed.values == [1])
  }

  @Test("actions kept after the store is freed keep neither its state nor its mutations alive")
  func keptActionsDoNotRetainState() {
    let flag = DeallocFlag()
    var actions: Actions<LogState<Kept>>?
    do {
      let state = LogState<Kept>()
      state.hook = { [tracked = Tracked(flag)] _ in _ = tracked }
      let store = Store(state: state, mutations: .init(), executor: .immediate)
      actions = store.actions
      actions?.dispatch(action: 1)
    }
    #expect(flag.isFreed)
    actions?.dispatch(action: 2)
  }

  @Test("inv12: a store freed during a commit: that commit ends, queued ones never run, the state goes after")
  func inv12_freedDuringCommit() {
    let flag = DeallocFlag()
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let committed = Recorder<Int>()
    var store: Store<LogState<Midway>>?
    do {
      let state = LogState<Midway> { [tracked = Tracked(flag)] action in
        _ = tracked
        committed.append(action)
        if action == 1 {
          entered.signal()
          resume.wait()
        }
      }
      store = Store(state: state, mutations: .init(), executor: .queue(.global()))
    }
    store?.actions.dispatch(action: 1)
    entered.wait()
    store?.actions.dispatch(action: 2)
    store = nil
    #expect(!flag.isFreed, "the state went while its commit was running")
    resume.signal()
    #expect(waitUntil { flag.isFreed })
    #expect(committed.values == [1])
  }

  @Test("an executor that never runs its work leaves actions queued, in order")
  func stalledExecutor() {
    let manual = ManualExecutor()
    let state = LogState<Stalled>()
    let store = Store(state: state, mutations: .init(), executor: manual.executor)
    store.actions.dispatch(action: 1)
    store.actions.dispatch(action: 2)
    #expect(state.committed.values.isEmpty)
    #expect(manual.pendingCount == 1, "one drain is scheduled, not one per action")
    manual.drain()
    store.actions.dispatch(action: 3)
    manual.drain()
    #expect(state.committed.values == [1, 2, 3])
  }

  @Test("inv8: a store is freed with its state when its last reference goes")
  func inv8_storeFreed() {
    let flag = DeallocFlag()
    weak var weakStore: Store<LogState<Release>>?
    do {
      let state = LogState<Release>()
      state.hook = { [tracked = Tracked(flag)] _ in _ = tracked }
      let store = Store(state: state, mutations: .init(), executor: .immediate)
      weakStore = store
      store.actions.dispatch(action: 1)
      Store<LogState<Release>>.actions.dispatch(action: 2)
      #expect(state.committed.values == [1, 2])
    }
    #expect(weakStore == nil)
    #expect(flag.isFreed)
  }
}

extension StoreTests {
  enum CancelledAction {}

  @Test("inv14: an action that middleware cancels never reaches commit, so it changes nothing")
  func inv14_cancelledActionNeverReachesCommit() {
    let events = Recorder<String>()
    let gate = Probe<CancelledAction>(name: "gate", events: events) { action, proceed in
      if action == 1 { proceed.cancel() } else { proceed() }
    }
    let state = LogState<CancelledAction>()
    let store = Store(state: state, mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(gate)])
    store.actions.dispatch(action: 1)
    store.actions.dispatch(action: 2)
    #expect(state.committed.values == [2], "a cancelled action was committed")
    #expect(events.values.contains("gate cancelled 1"))
  }
}
