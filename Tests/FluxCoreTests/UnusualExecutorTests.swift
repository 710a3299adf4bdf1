import Dispatch
import FluxCore
import Foundation
import Testing

/// Stores on executors that bend the rules of `Executor.init(_:)`: work run twice, on random
/// threads, synchronously on another thread, or from inside the context that received it.
@Suite("Stores on unusual executors")
struct UnusualExecutorTests {
  enum Twice {}
  enum RandomThreads {}
  enum OtherThreadSync {}
  enum ContextDispatches {}
  enum Chain {}
  enum Burst {}
  enum MainMany {}
  enum InlineAndLater {}
  enum FreedMidWait {}

  @Test("inv10: an executor that runs each work twice, inline and later elsewhere, commits each action once, in order")
  func inv10_workRunTwice() {
    let state = LogState<Twice>()
    let executor = Executor { work in
      work()
      DispatchQueue.global().async(execute: work)
    }
    let store = Store(state: state, mutations: .init(), executor: executor)
    race(threads: 3, iterations: 1_000) { thread, index in
      store.actions.dispatch(action: thread * 1_000_000 + index)
    }
    expectEachThreadInOrder(state, total: 3_000, settling: 20_000)
  }

  @Test("inv10: an executor that runs work on random threads after random delays keeps order and never overlaps")
  func inv10_randomThreads() {
    let state = LogState<RandomThreads>()
    let executor = Executor { work in
      let queue = DispatchQueue.global(qos: [.userInitiated, .utility, .background].randomElement()!)
      queue.asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0..<200)), execute: work)
      if Bool.random() { queue.async(execute: work) }  // and sometimes twice
    }
    let store = Store(state: state, mutations: .init(), executor: executor)
    let actions = store.actions
    state.hook = { action in
      // Re-entrant dispatch from the commit, for even actions of thread 0.
      if action < 1_000_000 && action % 2 == 0 { actions.dispatch(action: 9_000_000 + action) }
    }
    race(threads: 3, iterations: 1_000) { thread, index in
      store.actions.dispatch(action: thread * 1_000_000 + index)
    }
    let committed = expectEachThreadInOrder(state, total: 3_500, settling: 50_000)
    let position = Dictionary(uniqueKeysWithValues: committed.enumerated().map { ($1, $0) })
    for even in stride(from: 0, to: 1_000, by: 2) {
      #expect(position[9_000_000 + even]! > position[even]!)
    }
  }

  @Test("inv10: an executor that runs work synchronously on another thread, execute waiting, keeps order")
  func inv10_synchronousOnAnotherThread() {
    let state = LogState<OtherThreadSync>()
    let executor = Executor { work in
      let done = DispatchSemaphore(value: 0)
      Thread {
        work()
        done.signal()
      }.start()
      done.wait()
    }
    let store = Store(state: state, mutations: .init(), executor: executor)
    let actions = store.actions
    state.hook = { action in
      if action < 100 { actions.dispatch(action: action + 100) }
    }
    for action in 0..<100 { store.actions.dispatch(action: action) }
    // Each dispatch returns once the drain it asked for ran, re-entrant dispatches included.
    #expect(state.committed.values == (0..<100).flatMap { [$0, $0 + 100] })
    #expect(state.overlapCount == 0)
  }

  @Test("inv10: an executor whose context dispatches to the same store before running the work keeps order")
  func inv10_contextDispatches() {
    let state = LogState<ContextDispatches>()
    let actions = Box<Actions<LogState<ContextDispatches>>?>(nil)
    let counter = Counter()
    let executor = Executor { work in
      let value = counter.increment()
      if value < 50 { actions.value?.dispatch(action: 1_000 + value) }
      work()
    }
    let store = Store(state: state, mutations: .init(), executor: executor)
    actions.value = store.actions
    for action in 0..<20 { store.actions.dispatch(action: action) }
    let committed = state.committed.values
    #expect(committed.filter { $0 < 1_000 } == Array(0..<20))
    #expect(state.overlapCount == 0)
  }

  @Test("inv10: a chain of 10,000 dispatches from mutations on .immediate runs before the outer dispatch returns")
  func inv10_longChainOnImmediate() {
    let actions = Box<Actions<LogState<Chain>>?>(nil)
    let state = LogState<Chain> { action in
      if action < 10_000 { actions.value?.dispatch(action: action + 1) }
    }
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    actions.value = store.actions
    store.actions.dispatch(action: 0)
    #expect(state.committed.values == Array(0...10_000))
  }

  @Test("inv10: a mutation that dispatches 10,000 actions at once: all run after it, in order")
  func inv10_burstFromMutation() {
    let actions = Box<Actions<LogState<Burst>>?>(nil)
    let state = LogState<Burst> { action in
      if action == -1 { for next in 0..<10_000 { actions.value?.dispatch(action: next) } }
      if action == 5_000 { for next in 20_000..<20_100 { actions.value?.dispatch(action: next) } }
    }
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    actions.value = store.actions
    store.actions.dispatch(action: -1)
    #expect(state.committed.values == [-1] + Array(0..<10_000) + Array(20_000..<20_100))
  }

  @Test("inv10, inv13: a .mainThread store fed from several threads and from the main queue keeps each one's order")
  func inv10_mainThreadStoreFromEverywhere() async {
    let state = LogState<MainMany>()
    let store = Store(state: state, mutations: .init(), executor: .mainThread)
    let actions = store.actions
    let perSource = 500
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let group = DispatchGroup()
      for thread in 0..<3 {
        group.enter()
        DispatchQueue.global().async {
          for index in 0..<perSource { actions.dispatch(action: thread * 1_000_000 + index) }
          group.leave()
        }
      }
      group.enter()
      DispatchQueue.main.async {
        for index in 0..<perSource {
          actions.dispatch(action: 3_000_000 + index)
        }
        group.leave()
      }
      group.notify(queue: .global()) { continuation.resume() }
    }
    #expect(await eventually { state.committed.values.count == 4 * perSource })
    let committed = state.committed.values
    #expect(state.overlapCount == 0)
    for source in 0..<4 {
      let mine = committed.filter { $0 / 1_000_000 == source }.map { $0 % 1_000_000 }
      #expect(mine == Array(0..<perSource))
    }
  }

  @Test("inv10: an executor that runs work inline and also later, after the store went idle, commits nothing twice")
  func inv10_staleWorkAfterIdle() {
    let state = LogState<InlineAndLater>()
    let later = ManualExecutor()
    let executor = Executor { work in
      work()
      later.executor.execute(work)
    }
    let store = Store(state: state, mutations: .init(), executor: executor)
    store.actions.dispatch(action: 1)
    store.actions.dispatch(action: 2)
    later.drain()  // stale drains, while idle
    #expect(state.committed.values == [1, 2])
    withExtendedLifetime(store) {}
  }

  @Test("inv15: dispatchAndWait learns false when the store goes while its drain runs on another thread")
  func inv15_freedWhileDrainRuns() async {
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let state = LogState<FreedMidWait> { action in
      if action == 1 {
        entered.signal()
        resume.wait()
      }
    }
    var store: Store<LogState<FreedMidWait>>? = Store(state: state, mutations: .init(), executor: .queue(.global()))
    let actions = store!.actions
    actions.dispatch(action: 1)
    entered.wait()
    async let second = actions.dispatchAndWait(action: 2)
    try? await Task.sleep(nanoseconds: 10_000_000)  // the second action waits behind the first, or not yet sent
    store = nil
    resume.signal()
    #expect(await second == false)
    #expect(state.committed.values == [1])
  }
}

/// Waits for `total` commits of `state`, then `settling` microseconds more for any extra one, and
/// checks that there are exactly `total`, that none overlapped, and that the 1,000 actions each of
/// 3 threads dispatched (`thread * 1_000_000 + index`) committed in their order. Returns the log.
@discardableResult
private func expectEachThreadInOrder<Tag>(_ state: LogState<Tag>, total: Int, settling: UInt32) -> [Int] {
  #expect(waitUntil { state.committed.values.count >= total })
  usleep(settling)
  let committed = state.committed.values
  #expect(committed.count == total)
  #expect(state.overlapCount == 0)
  for thread in 0..<3 {
    let mine = committed.filter { $0 / 1_000_000 == thread }.map { $0 % 1_000_000 }
    #expect(mine == Array(0..<1_000))
  }
  return committed
}
