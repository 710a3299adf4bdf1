import Dispatch
import FluxCore
import FluxReactive
import FluxTesting
import Testing

@Suite("Main-thread work in tests")
struct MainThreadWorkTests {
  @Test("drainMainThreadWork returns once the main-thread work submitted before it has run, other threads' included")
  @MainActor
  func drainRunsWhatWaits() async {
    let early = Variable(0)
    let delivered = Variable(0)
    // Work from another thread waits on the main queue: the main actor is busy with this test.
    DispatchQueue.global().sync { Executor.mainThread.execute { early.value = 1 } }
    Executor.mainThread.execute { delivered.value = early.value + 1 }  // waits behind it, in order
    #expect(delivered.value == 0)
    await drainMainThreadWork()
    #expect(early.value == 1)
    #expect(delivered.value == 2)
  }

  @Test("drainMainThreadWork from off the main actor returns once the work submitted before it has run")
  func drainFromAnotherThread() async {
    let done = Variable(false)
    Executor.mainThread.execute { done.value = true }
    await drainMainThreadWork()
    #expect(done.value)
  }
}
