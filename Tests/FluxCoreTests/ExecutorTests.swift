import Dispatch
import FluxCore
import Foundation
import Testing

@Suite("Executor", .serialized)
struct ExecutorTests {
  enum MainBinding {}

  @Test("inv13: .immediate runs inline on the calling thread")
  func inv13_immediateRunsInline() {
    let ran = Counter()
    Executor.immediate.execute { ran.increment() }
    #expect(ran.value == 1)
  }

  @Test("inv13: .queue enqueues on the given queue")
  func inv13_queueEnqueues() {
    let key = DispatchSpecificKey<Int>()
    let queue = DispatchQueue(label: "executor-test")
    queue.setSpecific(key: key, value: 7)
    let seen = Recorder<Int?>()
    let blocker = DispatchSemaphore(value: 0)
    queue.async { blocker.wait() }
    Executor.queue(queue).execute { seen.append(DispatchQueue.getSpecific(key: key)) }
    #expect(seen.values.isEmpty, "queue work ran inline")
    blocker.signal()
    #expect(waitUntil { seen.values.count == 1 })
    #expect(seen.values == [7])
  }

  @Test("inv13: .mainThread runs inline on the main queue when nothing is pending")
  func inv13_mainInlineWhenIdle() async {
    let inline = await eventuallyOnMainQueue {
      let box = Box(false)
      Executor.mainThread.execute { box.value = true }
      return box.value
    }
    #expect(inline)
  }

  @Test("inv13: .mainThread from another thread enqueues on the main queue")
  func inv13_mainEnqueuesFromOtherThreads() async {
    let key = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    let seen = Recorder<Int?>()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        Executor.mainThread.execute {
          seen.append(DispatchQueue.getSpecific(key: key))
          continuation.resume()
        }
      }
    }
    #expect(seen.values == [1])
  }

  @Test("inv13: .mainThread keeps one process-wide order; pending work is not overtaken")
  func inv13_mainFIFOProcessWide() async {
    let order = Recorder<String>()
    let enqueued = DispatchSemaphore(value: 0)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.main.async {
        // Main is busy here, so work from another thread waits (pending) behind this block.
        DispatchQueue.global().async {
          Executor.mainThread.execute { order.append("background") }
          enqueued.signal()
        }
        enqueued.wait()
        // Nothing of ours runs inline while the background work is pending.
        Executor.mainThread.execute {
          order.append("main")
          continuation.resume()
        }
        order.append("after submit")
      }
    }
    #expect(order.values == ["after submit", "background", "main"])
  }

  @Test("inv13: work submitted from running .mainThread work runs right after it, by the same runner, not nested")
  func inv13_mainWorkFromRunningWorkRunsAfterItNotNested() async {
    let inOrder = await eventuallyOnMainQueue {
      let order = Recorder<String>()
      Executor.mainThread.execute {
        order.append("outer begin")
        Executor.mainThread.execute { order.append("inner") }
        order.append("outer end")
      }
      order.append("returned")
      return order.values == ["outer begin", "outer end", "inner", "returned"]
    }
    #expect(inOrder)
  }

  @Test("inv13: work submitted from running .mainThread work keeps submission order")
  func inv13_mainWorkFromRunningWorkKeepsFIFO() async {
    let inOrder = await eventuallyOnMainQueue {
      let order = Recorder<String>()
      Executor.mainThread.execute {
        order.append("outer")
        Executor.mainThread.execute {
          order.append("first")
          Executor.mainThread.execute { order.append("third") }
        }
        Executor.mainThread.execute { order.append("second") }
      }
      order.append("returned")
      return order.values == ["outer", "first", "second", "third", "returned"]
    }
    #expect(inOrder)
  }

  @Test("inv13: work submitted from running .mainThread work runs after work another thread submitted before it")
  func inv13_mainWorkFromRunningWorkWaitsForEarlierWorkFromElsewhere() async {
    let inOrder = await eventuallyOnMainQueue {
      let order = Recorder<String>()
      Executor.mainThread.execute {
        let submitted = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
          Executor.mainThread.execute { order.append("background") }
          submitted.signal()
        }
        submitted.wait()
        Executor.mainThread.execute { order.append("following") }
      }
      order.append("returned")
      return order.values == ["background", "following", "returned"]
    }
    #expect(inOrder)
  }

  @Test("inv13: .mainThread work from many threads and from running work runs once each, in each submitter's order")
  func inv13_mainWorkFromEverywhereRunsOnceInOrder() async {
    let order = Recorder<Int>()
    let threads = 4
    let perThread = 500
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let group = DispatchGroup()
      for thread in 0..<threads {
        group.enter()
        DispatchQueue.global().async {
          for index in 0..<perThread {
            let value = thread * 10_000 + index * 2
            Executor.mainThread.execute {
              order.append(value)
              // Following work: runs after this, before any later work of this thread.
              Executor.mainThread.execute { order.append(value + 1) }
            }
          }
          group.leave()
        }
      }
      group.notify(queue: .global()) { Executor.mainThread.execute { continuation.resume() } }
    }
    #expect(await eventually { order.values.count == threads * perThread * 2 })
    let values = order.values
    #expect(Set(values).count == values.count, "some work ran twice")
    let position = Dictionary(uniqueKeysWithValues: values.enumerated().map { ($1, $0) })
    for thread in 0..<threads {
      let submitted = values.filter { $0 / 10_000 == thread && $0 % 2 == 0 }
      #expect(submitted == submitted.sorted(), "thread \(thread)'s work ran out of order")
    }
    // Following work is submitted by the main queue, in the order its submitters ran.
    let following = values.filter { $0 % 2 == 1 }
    #expect(following.map { position[$0 - 1]! } == following.map { position[$0 - 1]! }.sorted())
    #expect(values.allSatisfy { $0 % 2 == 0 || position[$0]! > position[$0 - 1]! })
  }

  @Test("inv13: after running submitted work, .mainThread runs inline again on the main queue")
  func inv13_mainInlineAgainAfterNestedWork() async {
    let inline = await eventuallyOnMainQueue {
      let order = Recorder<String>()
      Executor.mainThread.execute {
        Executor.mainThread.execute { order.append("inner") }
      }
      Executor.mainThread.execute { order.append("next") }
      order.append("returned")
      return order.values == ["inner", "next", "returned"]
    }
    #expect(inline)
  }

  @Test("inv13: a commit on .mainThread from the main queue runs synchronously")
  func inv13_mainCommitIsSynchronous() async {
    let synchronous = await eventuallyOnMainQueue {
      let state = LogState<MainBinding>()
      let store = Store(state: state, mutations: .init(), executor: .mainThread)
      store.actions.dispatch(action: 5)
      return state.committed.values == [5]
    }
    #expect(synchronous)
  }

  @Test("work waits for the main queue on .mainThread and on a queue of the main queue, whichever object names it")
  func runsOnMainQueueTellsTheMainQueueByIdentity() {
    #expect(Executor.mainThread.runsOnMainQueue)
    #expect(Executor.queue(DispatchQueue.main).runsOnMainQueue)
    #expect(Executor.queue(.main).runsOnMainQueue)
    #expect(!Executor.immediate.runsOnMainQueue)
    #expect(!Executor.queue(DispatchQueue(label: "elsewhere")).runsOnMainQueue)
    #expect(!Executor.queue(.global()).runsOnMainQueue)
    #expect(!Executor { work in DispatchQueue.main.async(execute: work) }.runsOnMainQueue)
  }

  @Test("a custom executor runs work where its context puts it")
  func customExecutor() {
    let queue = DispatchQueue(label: "custom")
    let executor = Executor { work in queue.async(execute: work) }
    let ran = Counter()
    executor.execute { ran.increment() }
    #expect(waitUntil { ran.value == 1 })
  }
}
