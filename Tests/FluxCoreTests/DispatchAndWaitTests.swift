import Dispatch
import FluxCore
import Foundation
import Testing

@Suite("Awaiting a dispatch")
struct DispatchAndWaitTests {
  enum Executors {}
  enum Cancelled {}
  enum Gone {}
  enum Global {}
  enum Main {}

  @Test(
    "dispatchAndWait returns once the action is committed, on every executor",
    arguments: ["immediate", "main", "global"])
  func waitsForCommit(executorName: String) async {
    let executor: Executor =
      switch executorName {
      case "immediate": .immediate
      case "main": .mainThread
      default: .queue(.global())
      }
    let state = LogState<Executors>()
    let store = Store(state: state, mutations: .init(), executor: executor)
    for action in 0..<50 {
      let committed = await store.actions.dispatchAndWait(action: action)
      #expect(committed)
      #expect(state.committed.values.last == action)
    }
  }

  @Test("dispatchAndWait returns false for an action a middleware cancels")
  func cancelled() async {
    struct Refuse: Middleware {
      func intercept(action: Int, state: LogState<Cancelled>, proceed: Proceed) { proceed.cancel() }
    }
    let store = Store(
      state: LogState<Cancelled>(), mutations: .init(), executor: .queue(.global()),
      middlewares: [AnyMiddleware(Refuse())])
    #expect(await store.actions.dispatchAndWait(action: 1) == false)
  }

  @Test("dispatchAndWait returns false when the store is gone, or goes with the action queued")
  func storeGone() async {
    let manual = ManualExecutor()
    var store: Store<LogState<Gone>>? = Store(state: LogState<Gone>(), mutations: .init(), executor: manual.executor)
    let actions = store!.actions
    async let waiting = actions.dispatchAndWait(action: 1)
    #expect(await eventually { manual.pendingCount == 1 })
    store = nil
    #expect(await waiting == false)
    #expect(await actions.dispatchAndWait(action: 2) == false)
  }

  @Test("global dispatchAndWait returns once every store committed")
  func global() async {
    let states = (0..<3).map { _ in LogState<Global>() }
    let stores = states.map { Store(state: $0, mutations: .init(), executor: .queue(.global())) }
    #expect(await Store<LogState<Global>>.actions.dispatchAndWait(action: 4))
    for state in states { #expect(state.committed.values == [4]) }
    withExtendedLifetime(stores) {}
  }

  @MainActor
  @Test("awaiting on the main actor for a .mainThread store does not deadlock")
  func mainActorWithMainThreadStore() async {
    let state = LogState<Main>()
    let store = Store(state: state, mutations: .init(), executor: .mainThread)
    DispatchQueue.global().async { store.actions.dispatch(action: 0) }
    for action in 1...20 {
      #expect(await store.actions.dispatchAndWait(action: action))
    }
    // Action 0 comes from another thread, before, between or after these: not ordered with them.
    #expect(state.committed.values.filter { $0 != 0 } == Array(1...20))
  }
}

/// Where `dispatchAndWait` dispatches from: the caller's isolation.
@Suite("Awaiting a dispatch from the main actor")
struct DispatchAndWaitIsolationTests {
  enum Inline {}
  enum Immediate {}

  @MainActor
  @Test("dispatchAndWait on the main actor commits a .mainThread action inline when nothing is pending")
  func mainThreadCommitInline() async {
    let state = LogState<Inline>()
    let store = Store(state: state, mutations: .init(), executor: .mainThread)
    var inline = false
    for attempt in 0..<200 where !inline {
      let log = Recorder<String>()
      state.hook = { _ in log.append("commit") }
      // Main-queue work submitted before the call: an inline commit runs before it.
      DispatchQueue.main.async { log.append("later main-queue work") }
      #expect(await store.actions.dispatchAndWait(action: attempt))
      for _ in 0..<5_000 where log.values.count < 2 { try? await Task.sleep(nanoseconds: 1_000_000) }
      inline = log.values == ["commit", "later main-queue work"]
    }
    #expect(inline, "the commit never ran inline, before the first suspension")
  }

  @MainActor
  @Test("dispatchAndWait on the main actor commits an .immediate action on the main queue")
  func immediateCommitOnCallersQueue() async {
    let key = mainQueueKey
    let onMain = Recorder<Bool>()
    let state = LogState<Immediate> { _ in onMain.append(DispatchQueue.getSpecific(key: key) == true) }
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    #expect(await store.actions.dispatchAndWait(action: 1))
    #expect(onMain.values == [true], "the commit of an .immediate store ran off the caller's actor")
  }
}

/// A requirement that `Actions` met before `dispatchAndWait` took the caller's isolation.
protocol WaitsForCommit {
  func dispatchAndWait(action: Int) async -> Bool
}

extension Actions: WaitsForCommit where State == LogState<DispatchAndWaitSpellingTests.AsValue> {}

@Suite("Spelling dispatchAndWait")
struct DispatchAndWaitSpellingTests {
  enum AsValue {}

  @Test("dispatchAndWait(action:) passes as a function of one argument and meets a protocol requirement")
  func asFunctionValueAndWitness() async {
    let state = LogState<AsValue>()
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    let byType: (Int) async -> Bool = store.actions.dispatchAndWait
    let byName = store.actions.dispatchAndWait(action:)
    let witness: any WaitsForCommit = store.actions
    #expect(await byType(1))
    #expect(await byName(2))
    #expect(await witness.dispatchAndWait(action: 3))
    #expect(state.committed.values == [1, 2, 3])
  }
}

/// Set on the main queue once and kept for the whole process: a queue holds its keys by address,
/// so a key freed after a test could be taken for a later key (of another type) at that address.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()
