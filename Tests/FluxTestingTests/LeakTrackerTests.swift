import Dispatch
import FluxCore
import FluxReactive
import FluxTesting
import Testing

@Suite("LeakTracker")
struct LeakTrackerTests {
  @Test("objects freed by the end of the body pass")
  func freedObjectsPass() async {
    withLeakTracking { leaks in
      let store = leaks.track(Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate))
      let sink = leaks.track(Sink<Int>())
      let observation = sink.signal.observe { store.actions.dispatch(action: .add($0)) }
      sink.send(value: 2)
      observation.dispose()
    }
    await withLeakTracking { leaks in
      let store = leaks.track(Store<CounterState>(state: .init(), mutations: .init(), executor: .queue(.global())))
      await store.actions.dispatchAndWait(action: .add(1))
    }
  }

  @Test("an object still held after the body fails the test, naming its type and where it was tracked")
  func heldObjectFails() {
    var kept: [AnyObject] = []
    let line = #line + 3
    withKnownIssue {
      withLeakTracking { leaks in
        kept.append(leaks.track(Variable(1)))
      }
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.hasPrefix(
        "Variable<Int>, tracked at FluxTestingTests/LeakTrackerTests.swift:\(line), outlived the test")
        && issue.sourceLocation?.line == line
    }
    #expect(kept.count == 1)
  }

  @Test("an object tracked after the body has returned fails the test at once: it could not be checked")
  func trackingAfterTheBodyFails() {
    let escaped = withLeakTracking { leaks in leaks }
    let line = #line + 2
    withKnownIssue {
      escaped.track(Variable(1))
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text
        == "Variable<Int>, tracked at FluxTestingTests/LeakTrackerTests.swift:\(line) after the body of "
        + "withLeakTracking returned, cannot be checked: track it within the body"
        && issue.sourceLocation?.line == line
    }
  }

  @Test("an observer that captures its own sink is a cycle, and is caught")
  func cycleFails() {
    withKnownIssue {
      withLeakTracking { leaks in
        let sink = leaks.track(Sink<Int>())
        _ = sink.signal.observe { _ in _ = sink }
      }
    }
  }

  @Test(
    "a store's state is not reported once dispatchAndWait has returned: the drain's end gets a moment",
    arguments: [Executor.mainThread, .queue(.global())])
  func stateAfterTheCommitIsNoLeak(executor: Executor) async {
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          for _ in 0..<500 {
            await withLeakTracking { leaks in
              let state = leaks.track(CounterState())
              let store = leaks.track(Store<CounterState>(state: state, mutations: .init(), executor: executor))
              await store.actions.dispatchAndWait(action: .add(1))
            }
          }
        }
      }
    }
  }

  @Test("a synchronous body on the main actor gets the grace too: a store still committing on a queue is no leak")
  @MainActor
  func synchronousBodyOnTheMainActorWaitsForAQueue() {
    let queue = DispatchQueue(label: "leaks")
    for _ in 0..<50 {
      withLeakTracking { leaks in
        let slow = SlowDidCommit()
        let state = leaks.track(CounterState())
        let store = leaks.track(
          Store<CounterState>(
            state: state, mutations: .init(), executor: .queue(queue), middlewares: [AnyMiddleware(slow)]))
        store.actions.dispatch(action: .add(1))
        _ = slow.committed.wait(timeout: .now() + .seconds(10))  // the drain is in its didCommit now
      }
    }
  }

  @Test("an object main-queue work holds after a synchronous body on the main queue is reported, saying why")
  @MainActor
  func synchronousBodyOnTheMainQueueNamesMainQueueWork() {
    let line = #line + 3
    withKnownIssue {
      withLeakTracking { leaks in
        let held = leaks.track(Variable(1))
        DispatchQueue.main.async { withExtendedLifetime(held) {} }
      }
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.hasPrefix(
        "Variable<Int>, tracked at FluxTestingTests/LeakTrackerTests.swift:\(line), outlived the test")
        && text.contains("main queue")
    }
  }
}
