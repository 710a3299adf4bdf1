import Dispatch
import FluxCore
import FluxTesting
import Testing

@Suite("ManualExecutor")
struct ManualExecutorTests {
  @Test("work waits until the test runs it, then runs first submitted first")
  func workWaits() {
    let manual = ManualExecutor()
    let order = Lines()
    manual.executor.execute { order.output.write("a") }
    manual.executor.execute { order.output.write("b") }
    #expect(manual.pendingCount == 2)
    #expect(order.all.isEmpty)
    #expect(manual.runNext())
    #expect(order.all == ["a"])
    #expect(manual.pendingCount == 1)
    #expect(manual.runNext())
    #expect(!manual.runNext())
    #expect(order.all == ["a", "b"])
  }

  @Test("runAll also runs work submitted while it runs, and counts what ran")
  func runAllRunsNewWork() {
    let manual = ManualExecutor()
    let executor = manual.executor
    let order = Lines()
    executor.execute {
      order.output.write("outer")
      executor.execute { order.output.write("inner") }
    }
    #expect(manual.runAll() == 2)
    #expect(order.all == ["outer", "inner"])
    #expect(manual.pendingCount == 0)
  }

  @Test("a store on a manual executor commits only when the test runs it")
  func storeCommitsWhenRun() {
    let manual = ManualExecutor()
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: manual.executor)
    store.actions.dispatch(action: .add(1))
    store.actions.dispatch(action: .add(2))
    #expect(store.computed.count.value == 0)
    manual.runAll()
    #expect(store.computed.count.value == 3)
  }

  @Test("discardAll drops what waits without running it")
  func discardAll() {
    let manual = ManualExecutor()
    let order = Lines()
    manual.executor.execute { order.output.write("never") }
    manual.discardAll()
    #expect(manual.pendingCount == 0)
    #expect(manual.runAll() == 0)
    #expect(order.all.isEmpty)
  }

  @Test("work submitted from many threads at once all waits, none lost")
  func threadSafe() {
    let manual = ManualExecutor()
    let executor = manual.executor
    let ran = Lines()
    DispatchQueue.concurrentPerform(iterations: 400) { index in
      executor.execute { ran.output.write("\(index)") }
    }
    #expect(manual.pendingCount == 400)
    #expect(manual.runAll() == 400)
    #expect(Set(ran.all).count == 400)
  }

  @Test("a store asks for one drain at a time, which commits every action waiting when it runs")
  func oneDrainCommitsWhatWaits() {
    let manual = ManualExecutor()
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: manual.executor)
    store.actions.dispatch(action: .add(1))
    #expect(manual.pendingCount == 1)
    #expect(store.computed.count.value == 0)
    manual.runNext()
    #expect(store.computed.count.value == 1)
    store.actions.dispatch(action: .add(2))
    store.actions.dispatch(action: .add(3))
    #expect(manual.pendingCount == 1)
    manual.runNext()
    #expect(store.computed.count.value == 6)
    #expect(manual.pendingCount == 0)
  }
}
