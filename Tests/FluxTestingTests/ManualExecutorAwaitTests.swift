import Dispatch
import FluxCore
import FluxReactive
import FluxTesting
import Foundation
import Testing

/// Awaiting an action of a store on a manual executor: the waiting task runs the executor's
/// work, so `dispatchAndWait`, `Replay.run()` and `TimeTravel.goTo` return.
@Suite("ManualExecutor, awaited")
struct ManualExecutorAwaitTests {
  @Test("dispatchAndWait into a store on a manual executor runs the work it waits for, and returns")
  func dispatchAndWaitRunsTheWork() async {
    let manual = ManualExecutor()
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: manual.executor)
    let watchdog = Watchdog(running: manual)
    #expect(await store.actions.dispatchAndWait(action: .add(2)))
    #expect(await store.actions.dispatchAndWait(action: .add(3)))
    #expect(!watchdog.stop(), "dispatchAndWait returned only once the watchdog ran the executor")
    #expect(store.computed.count.value == 5)
    #expect(manual.pendingCount == 0)
  }

  @Test("dispatchAndWait on a manual executor learns of a cancel, and of a store freed while it waits")
  func dispatchAndWaitLearnsEveryEnd() async {
    let manual = ManualExecutor()
    let watchdog = Watchdog(running: manual)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: manual.executor, middlewares: [AnyMiddleware(NoNegativeAmounts())])
    #expect(await store.actions.dispatchAndWait(action: .add(-1)) == false)
    withExtendedLifetime(store) {}
    // A store whose middleware frees it, from another thread, while its action is held.
    let holder = StoreHolder()
    holder.store = Store(
      state: .init(), mutations: .init(), executor: manual.executor, middlewares: [AnyMiddleware(FreesItsStore(holder))]
    )
    let held = holder.store!.actions
    #expect(await held.dispatchAndWait(action: .add(1)) == false)
    #expect(!watchdog.stop(), "dispatchAndWait returned only once the watchdog ran the executor")
  }

  @Test("dispatchAndWait on a manual executor waits for a middleware that lets the action go from another thread")
  func dispatchAndWaitWaitsForALateDecision() async {
    let watchdog = Watchdog()
    for _ in 0..<20 {
      let manual = ManualExecutor()
      watchdog.watch(manual)
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: manual.executor,
        middlewares: [AnyMiddleware(LaterOnAnotherThread())])
      #expect(await store.actions.dispatchAndWait(action: .add(1)))
      #expect(store.computed.count.value == 1)
    }
    #expect(!watchdog.stop(), "dispatchAndWait returned only once the watchdog ran the executor")
  }

  @Test("a global dispatchAndWait reaches a store on a manual executor and returns once every store committed")
  func globalDispatchAndWait() async {
    let manual = ManualExecutor()
    let watchdog = Watchdog(running: manual)
    let stores = [
      Store<AwaitedState>(state: .init(), mutations: .init(), executor: manual.executor),
      Store<AwaitedState>(state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "awaited"))),
    ]
    #expect(await Store<AwaitedState>.actions.dispatchAndWait(action: 4))
    #expect(!watchdog.stop(), "dispatchAndWait returned only once the watchdog ran the executor")
    #expect(stores.map(\.computed.state.total.value) == [4, 4])
  }

  @Test("Replay.run into a tester on a manual executor returns, and the tester sees every commit")
  func replayIntoAManualTester() async throws {
    let manual = ManualExecutor()
    let watchdog = Watchdog(running: manual)
    let a = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
    let b = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
    let replay = Replay(try ReplayTests.session())
    replay.route("a", to: a.actions)
    replay.route("b", to: b.actions)
    #expect(try await replay.run() == 4)
    #expect(!watchdog.stop(), "the replay returned only once the watchdog ran the executor")
    await a.expect(committed: [.add(2), .add(3)])
    await b.expect(committed: [.set(10), .add(1)])
    a.expect(reading: \.count.value, equals: 5)
    b.expect(reading: \.count.value, equals: 11)
    a.finish()
    b.finish()
  }

  @Test("TimeTravel.goTo into a tester's store on a manual executor returns, the state set")
  func timeTravelIntoAManualTester() async throws {
    let travel = try TimeTravel(try ReplayTests.session(), label: "a", from: CounterState(), mutations: .init())
    let manual = ManualExecutor()
    let watchdog = Watchdog(running: manual)
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
    #expect(await travel.goTo(5, in: tester.store))
    tester.expect(reading: \.count.value, equals: 5)
    #expect(await travel.goTo(1, in: tester.store))
    #expect(!watchdog.stop(), "goTo returned only once the watchdog ran the executor")
    await tester.expect(committed: [.set(5), .set(2)])
    tester.finish()
  }

  @MainActor
  @Test("from the main actor, dispatchAndWait on a manual executor commits on the main actor")
  func dispatchAndWaitFromTheMainActor() async {
    let manual = ManualExecutor()
    let watchdog = Watchdog(running: manual)
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
    let onMain = Lines()
    let observation = tester.computed.count.signal.observe { value in
      if value == 7 { onMain.output.write("\(DispatchQueue.getSpecific(key: mainQueueKey) == true)") }
    }
    #expect(await tester.actions.dispatchAndWait(action: .add(7)))
    observation.dispose()
    #expect(!watchdog.stop(), "dispatchAndWait returned only once the watchdog ran the executor")
    #expect(onMain.all == ["true"])
    await tester.expect(committed: [.add(7)])
    tester.finish()
  }

  @Test("tasks awaiting stores on shared manual executors learn their own actions' ends, whatever middleware decides")
  func awaitedActionsEndWhateverTheMiddlewareDecides() async {
    for round in 0..<300 {
      let shared = ManualExecutor()
      let other = ManualExecutor()
      let stores = [shared.executor, shared.executor, other.executor].map {
        Store<ChaosState>(
          state: .init(), mutations: .init(), executor: $0, middlewares: [AnyMiddleware(DecidesAnyhow())])
      }
      // Two tasks at once, each awaiting a store on the shared executor: either may run the other's work.
      let ends = await withTaskGroup(of: [Bool].self) { group in
        for store in stores.prefix(2) {
          group.addTask {
            var ends: [Bool] = []
            for amount in 0..<10 { ends.append(await store.actions.dispatchAndWait(action: amount)) }
            return ends
          }
        }
        return await group.reduce(into: []) { $0.append($1) }
      }
      let expected = (0..<10).map(DecidesAnyhow.commits)
      #expect(ends == [expected, expected], "round \(round)")
      #expect(stores.prefix(2).map(\.computed.state.total.value) == [12, 12], "round \(round)")  // 0 + 1 + 5 + 6
      // A global dispatch reaches the three stores, on the two executors.
      let amount = round % 5
      #expect(await Store<ChaosState>.actions.dispatchAndWait(action: amount) == DecidesAnyhow.commits(amount))
      let totals = stores.map(\.computed.state.total.value)
      #expect(totals == [12, 12, 0].map { $0 + (DecidesAnyhow.commits(amount) ? amount : 0) }, "round \(round)")
    }
  }
}

/// A state of its own, so that the global dispatch above reaches no other test's store.
private final class AwaitedState: State {
  typealias Action = Int
  typealias Mutations = AwaitedMutations

  let total = Variable(0)
}

private struct AwaitedMutations: Mutations {
  func commit(action: Int, state: AwaitedState) { state.total.modify { $0 += action } }
}

/// A store that one thread frees while another awaits its action.
private final class StoreHolder: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var kept: Store<CounterState>?

  var store: Store<CounterState>? {
    get { lock.withLock { kept } }
    set { lock.withLock { kept = newValue } }
  }
}

/// Holds each action, and frees its store from another thread meanwhile.
private final class FreesItsStore: Middleware, @unchecked Sendable {
  private let holder: StoreHolder
  private let lock = NSLock()
  // Guarded by `lock`.
  private var kept: [Proceed] = []

  init(_ holder: StoreHolder) {
    self.holder = holder
  }

  func intercept(action: CounterAction, state: CounterState, proceed: Proceed) {
    lock.withLock { kept.append(proceed) }
    DispatchQueue.global().async { [holder] in holder.store = nil }
  }
}

/// Breaks a wait that would never end: runs the manual executors it watches from another thread
/// once five minutes have passed since it began or was last given an executor, without the test
/// stopping it, and says so. Not a measure of speed: a test on a loaded machine may wait long for
/// a thread of the cooperative pool (a round waited over two minutes under the thread sanitizer
/// beside other builds); a wait that needs the watchdog to end fails its test rather than hang
/// it.
final class Watchdog: @unchecked Sendable {
  // Guarded by `lock`.
  private let lock = NSLock()
  private var watched: [ManualExecutor] = []
  private var isStopped = false
  private var hasFired = false
  /// When the watchdog starts running the executors: five minutes after it began or was last
  /// given an executor to watch, so that a test of many rounds on a loaded machine (under the
  /// thread sanitizer, beside other tests) is never taken for one that hangs. Swift Testing runs
  /// synchronous tests on the threads of the cooperative pool, as many as the cores: while two
  /// long ones run on a machine of two, an awaiting test's task waits for a thread, over two
  /// minutes at times.
  private static let patience = DispatchTimeInterval.seconds(300)
  private var deadline = DispatchTime.now() + Watchdog.patience

  init(running manual: ManualExecutor? = nil) {
    if let manual { watched.append(manual) }
    Thread.detachNewThread { [self] in
      while true {
        let (stopped, due) = lock.withLock { (isStopped, DispatchTime.now() >= deadline) }
        if stopped { return }
        if due { break }
        Thread.sleep(forTimeInterval: 0.1)
      }
      while let executors = lock.withLock({ isStopped ? nil : watched }) {
        lock.withLock { hasFired = true }
        for manual in executors { manual.runAll() }
        Thread.sleep(forTimeInterval: 0.001)
      }
    }
  }

  /// Watches `manual` too, for five minutes from now.
  func watch(_ manual: ManualExecutor) {
    lock.withLock {
      watched.append(manual)
      deadline = .now() + Watchdog.patience
    }
  }

  /// Stops it; whether it had to run an executor.
  func stop() -> Bool {
    lock.withLock {
      isStopped = true
      return hasFired
    }
  }
}

/// A state of its own, so that the global dispatch above reaches no other test's store.
private final class ChaosState: State {
  typealias Action = Int
  typealias Mutations = ChaosMutations

  let total = Variable(0)
}

private struct ChaosMutations: Mutations {
  func commit(action: Int, state: ChaosState) { state.total.modify { $0 += action } }
}

/// Decides each action in one of five ways, by its amount: proceeds at once, proceeds from
/// another thread, cancels from another thread, lets go of its `Proceed` undecided on another
/// thread (the store cancels it), or cancels at once.
private struct DecidesAnyhow: Middleware {
  /// Whether an action of `amount` is committed.
  static func commits(_ amount: Int) -> Bool { amount % 5 <= 1 }

  func intercept(action: Int, state: ChaosState, proceed: Proceed) {
    switch action % 5 {
    case 0: proceed()
    case 1: DispatchQueue.global().async { proceed() }
    case 2: DispatchQueue.global().async { proceed.cancel() }
    case 3: DispatchQueue.global().async { withExtendedLifetime(proceed) {} }
    default: proceed.cancel()
    }
  }
}
