import Dispatch
import FluxCore
import FluxReactive
import Foundation
import Testing

@testable import FluxTesting

@Suite("StoreTester")
struct StoreTesterTests {
  @Test("an action's commit and the state it leaves are asserted in one call")
  func dispatchAsserts() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    await tester.dispatch(.add(2), reading: \.count.value, equals: 2)
    await tester.dispatch(.add(3)) { $0.count.value == 5 }
    await tester.dispatch(.reset, committed: [.reset])
    tester.expect(reading: \.count.value, equals: 0)
    tester.finish()
  }

  @Test("actions cancelled by middleware are asserted apart from those committed")
  func cancelled() async {
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), middlewares: [AnyMiddleware(NoNegativeAmounts())])
    await tester.dispatch(.add(-1), committed: [], cancelled: [.add(-1)], reading: \.count.value, equals: 0)
    tester.finish()
  }

  @Test("follow-up actions must be listed: the assertion covers every commit since the previous one")
  func followUps() async {
    let refill = RefillAfterReset()
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), middlewares: [AnyMiddleware(refill)])
    refill.serve(tester.actions)
    await tester.dispatch(.reset, committed: [.reset, .add(10)], reading: \.count.value, equals: 10)
    tester.finish()
  }

  @Test("a wrong list of commits fails, naming the action, expected against actual, at the caller's line")
  func failureNamesActionAndLine() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    let line = #line + 2
    await withKnownIssue {
      await tester.dispatch(.add(2), committed: [.add(3)])
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text == "after dispatching add(2): the store committed [add(2)], expected [add(3)]"
        && issue.sourceLocation?.line == line && issue.sourceLocation?.fileID == #fileID
    }
  }

  @Test("a wrong state fails and shows what it reads against what was expected")
  func failureShowsState() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    await withKnownIssue {
      await tester.dispatch(.add(2), reading: \.count.value, equals: 3)
    } matching: { issue in
      issue.comments.map(\.rawValue).joined() == "after dispatching add(2): the state reads 2, expected 3"
    }
    await withKnownIssue {
      await tester.dispatch(.add(1)) { $0.count.value == 0 }
    } matching: { issue in
      issue.comments.map(\.rawValue).joined()
        == "after dispatching add(1): the state is not as expected; it is CounterState(count: 3)"
    }
  }

  @Test("finish fails for an action no assertion covered")
  func finishReportsLeftovers() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    tester.actions.dispatch(action: .set(7))  // straight to the store: no assertion covers it
    withKnownIssue {
      tester.finish()
    } matching: { issue in
      issue.comments.map(\.rawValue).joined().hasPrefix("at the end of the test, actions no assertion covered:")
    }
  }

  @Test("with a manual executor, the tester runs the waiting work before it asserts")
  func manualExecutor() async {
    let manual = ManualExecutor()
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
    tester.actions.dispatch(action: .add(1))
    #expect(manual.pendingCount == 1)
    tester.expect(reading: \.count.value, equals: 0)
    await tester.dispatch(.add(2), committed: [.add(1), .add(2)], reading: \.count.value, equals: 3)
    tester.finish()
  }

  @Test("on a queue, an assertion waits for the commits it expects")
  func queueExecutor() async {
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "tester")))
    await tester.dispatch(.add(5), reading: \.count.value, equals: 5)
    tester.actions.dispatch(action: .add(1))
    await tester.expect(committed: [.add(1)])
    tester.expect(reading: \.count.value, equals: 6)
    tester.finish()
  }

  @Test("an action held by a middleware and let go later from another thread is waited for")
  func heldAction() async {
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), middlewares: [AnyMiddleware(LaterOnAnotherThread())])
    await tester.dispatch(.add(1), reading: \.count.value, equals: 1)
    tester.finish()
  }

  @Test("on the main thread, from the main actor")
  @MainActor
  func mainThreadExecutor() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: .mainThread)
    await tester.dispatch(.add(4), reading: \.count.value, equals: 4)
    tester.finish()
  }

  @Test("finish fails for an action still under way that no assertion waited for")
  func finishReportsActionsUnderWay() async {
    let holder = HoldUntilReleased()
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), middlewares: [AnyMiddleware(holder)], timeout: 0.1)
    tester.actions.dispatch(action: .add(1))  // held until released
    withKnownIssue {
      tester.finish()  // waits 0.1 s for it, then fails
    } matching: { issue in
      issue.comments.map(\.rawValue).joined().hasPrefix("at the end of the test, the store still has actions under way")
    }
    holder.release()
    await tester.expect(committed: [.add(1)])
    tester.finish()
  }

  @Test("an assertion returns once the store's drain has ended, shared middleware after the recorder included")
  @MainActor
  func assertionWaitsForTheEndOfTheDrain() async {
    let registration = SharedMiddlewares.add(SlowAfterSettleCommits())
    defer { registration.remove() }
    let tester = StoreTester<SettleState>(
      state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "settle")))
    await tester.dispatch(1, committed: [1])  // the recorder sees it 0.1 s before the drain ends
    #expect(tester.store.isSettled)
    tester.finish()  // on the main queue: waits for nothing
  }

  @Test("on the main actor, finish waits for a store whose work runs off the main queue")
  @MainActor
  func finishOnTheMainActorWaitsForAQueueStore() async {
    let registration = SharedMiddlewares.add(SlowAfterSettleCommits())
    defer { registration.remove() }
    let tester = StoreTester<SettleState>(
      state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "settle")))
    tester.actions.dispatch(action: 2)  // committed on the queue; its drain ends 0.1 s later
    withKnownIssue {
      tester.finish()  // waits for the drain, so the action is left over, not under way
    } matching: { issue in
      issue.comments.map(\.rawValue).joined() == "at the end of the test, actions no assertion covered: committed 2"
    }
  }

  @Test("a store given a manual executor's executor fails its assertions with a hint, not only a list")
  func manualExecutorsExecutorFailsWithAHint() async {
    let manual = ManualExecutor()
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), executor: manual.executor, timeout: 0.05)
    await withKnownIssue {
      await tester.dispatch(.add(1))
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.hasPrefix("after dispatching add(1): the store committed [], expected [add(1)]; after 0.05 s,")
        && text.contains("give the tester the ManualExecutor itself")
    }
    manual.runAll()
    await tester.expect(committed: [.add(1)])
    tester.finish()
  }

  @Test("finish fails for work still waiting on the manual executor, and says how much, in good grammar")
  func finishCountsManualWork() async {
    let manual = ManualExecutor()
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
    manual.executor.execute {}
    tester.actions.dispatch(action: .add(1))
    for expected in ["2 pieces of work still wait", "1 piece of work still waits"] {
      withKnownIssue {
        tester.finish()
      } matching: { issue in
        issue.comments.map(\.rawValue).joined()
          == "at the end of the test, \(expected) on the manual executor (actions no assertion ran: await an "
          + "assertion first)"
      }
      manual.runNext()
    }
    await tester.expect(committed: [.add(1)])
    tester.finish()
  }

  @Test("an action a middleware still holds fails its assertion with a hint that says so, on a manual executor too")
  func heldActionHint() async {
    let manual = ManualExecutor()
    let held = HoldUntilReleased()
    let testers = [
      StoreTester<CounterState>(
        state: .init(), mutations: .init(), executor: manual, middlewares: [AnyMiddleware(held)]),
      StoreTester<CounterState>(state: .init(), mutations: .init(), middlewares: [AnyMiddleware(held)], timeout: 0.05),
    ]
    for tester in testers {
      await withKnownIssue {
        await tester.dispatch(.add(1))
      } matching: { issue in
        let text = issue.comments.map(\.rawValue).joined()
        return text.hasPrefix("after dispatching add(1): the store committed [], expected [add(1)]; ")
          && text.contains("a middleware still holds an action")
      }
    }
    held.release()
    for tester in testers {
      await tester.expect(committed: [.add(1)])
      tester.finish()
    }
  }

  @Test("a commit slower than the timeout fails its assertion without the hint of an executor that never ran")
  func slowCommitFailsWithoutTheStalledHint() async {
    let state = GateState()
    let tester = StoreTester<GateState>(
      state: state, mutations: .init(), executor: .queue(DispatchQueue(label: "gate")), timeout: 0.5)
    await withKnownIssue {
      await tester.dispatch(1)  // its commit waits for the gate, opened only after the assertion
    } matching: { issue in
      issue.comments.map(\.rawValue).joined() == "after dispatching 1: the store committed [], expected [1]"
    }
    state.gate.signal()
    await tester.expect(committed: [1])
    tester.finish()
  }

  @Test("a wrong string read from the state shows both strings in quotes, so a space or an empty string shows")
  func failureQuotesStrings() async {
    let tester = StoreTester<PlainState>(state: .init(), mutations: .init())
    await withKnownIssue {
      await tester.dispatch(0, reading: { $0.state.title.value }, equals: "sums ")
      tester.expect(reading: { String($0.state.title.value.prefix(0)) }, equals: "0")
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text == #"after dispatching 0: the state reads "sums", expected "sums ""#
        || text == #"now: the state reads "", expected "0""#
    }
    tester.finish()
  }

  @Test("a failed state check shows the properties a state inherits from its superclass too")
  func failureDescribesInheritedProperties() async {
    let tester = StoreTester<DerivedState>(state: .init(), mutations: .init())
    await withKnownIssue {
      await tester.dispatch(3) { $0.state.total.value == 0 }
    } matching: { issue in
      issue.comments.map(\.rawValue).joined()
        == #"after dispatching 3: the state is not as expected; it is DerivedState(limit: 10, total: 3)"#
    }
  }

  @Test("a failed state check shows a state without a description by its properties, variables by their values")
  func failureDescribesAStateByItsProperties() async {
    let tester = StoreTester<PlainState>(state: .init(), mutations: .init())
    await withKnownIssue {
      await tester.dispatch(3) { $0.state.total.value == 0 }
    } matching: { issue in
      issue.comments.map(\.rawValue).joined()
        == #"after dispatching 3: the state is not as expected; it is PlainState(total: 3, title: "sums", limit: 10)"#
    }
  }

  @Test(
    "on the main queue, finish does not wait for a store whose work runs there: waiting would keep it from running",
    arguments: ["mainThread", "queue of the main queue"])
  @MainActor
  func finishOnTheMainQueueDoesNotWait(executorName: String) async {
    let executor: Executor = executorName == "mainThread" ? .mainThread : .queue(DispatchQueue.main)
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), executor: executor, middlewares: [AnyMiddleware(GoOnFromMainLater())],
      timeout: 2)
    tester.actions.dispatch(action: .add(1))  // held until a main-queue block 20 ms from now
    let start = DispatchTime.now().uptimeNanoseconds
    withKnownIssue {
      tester.finish()
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.hasPrefix("at the end of the test, the store still has actions under way")
        && text.hasSuffix("finish() cannot wait for its work: await an assertion first)")
    }
    #expect(DispatchTime.now().uptimeNanoseconds - start < 1_000_000_000, "finish waited on the main queue")
    await tester.expect(committed: [.add(1)])
    tester.finish()
  }

  @Test("a tester keeps reporting to Swift Testing when it asserts outside the test's task")
  func harnessIsTakenWhereTheTesterIsMade() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    #expect(tester.harness == .swiftTesting)
    // Where no Swift Testing test is current, the library could not tell by itself.
    #expect(await Task.detached { Harness.current }.value == .xcTest)
    tester.finish()
  }

  @Test("a timeout that is not a finite number of seconds, 0 or more, stops with a message")
  func badTimeoutStopsWithMessage() async {
    let results = [
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        _ = StoreTester<CounterState>(state: .init(), mutations: .init(), timeout: -1)
      },
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        _ = StoreTester<CounterState>(state: .init(), mutations: .init(), timeout: .infinity)
      },
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        _ = StoreTester<CounterState>(state: .init(), mutations: .init(), timeout: .nan)
      },
    ]
    for result in results {
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(message.contains("StoreTester: timeout must be a finite number of seconds"), "\(message)")
    }
  }

  @Test("a timeout of centuries waits without overflowing")
  func hugeTimeout() async {
    let tester = StoreTester<CounterState>(
      state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "huge")), timeout: 1e12)
    await tester.dispatch(.add(2), committed: [.add(2)])
    tester.finish()
  }
}

/// A state of its own, so that the slow shared middleware below slows no other test.
private final class SettleState: State {
  typealias Action = Int
  typealias Mutations = SettleMutations
}

private struct SettleMutations: Mutations {
  func commit(action: Int, state: SettleState) {}
}

/// A state whose commits wait until `gate` is signalled, once each.
private final class GateState: State, CustomStringConvertible {
  typealias Action = Int
  typealias Mutations = GateMutations

  let gate = DispatchSemaphore(value: 0)
  var description: String { "GateState" }
}

private struct GateMutations: Mutations {
  func commit(action: Int, state: GateState) { state.gate.wait() }
}

/// A state that does not describe itself.
private final class PlainState: State {
  typealias Action = Int
  typealias Mutations = PlainMutations

  let total = Variable(0)
  let title = Constant("sums")
  let limit = 10
}

private struct PlainMutations: Mutations {
  func commit(action: Int, state: PlainState) { state.total.modify { $0 += action } }
}

/// Shared properties of states, in a base class.
private class LimitedState: @unchecked Sendable {
  // Sendable: its one property is a constant of a Sendable type.
  let limit = 10
}

private final class DerivedState: LimitedState, State, @unchecked Sendable {
  // Sendable: its one property, like its superclass's, is a constant of a Sendable type.
  typealias Action = Int
  typealias Mutations = DerivedMutations

  let total = Variable(0)
}

private struct DerivedMutations: Mutations {
  func commit(action: Int, state: DerivedState) { state.total.modify { $0 += action } }
}

/// Takes 0.1 s in `didCommit` for ``SettleState`` stores, after the tester's recorder.
private struct SlowAfterSettleCommits: SharedMiddleware {
  func didCommit(action: any Sendable, state: any State) {
    if state is SettleState { Thread.sleep(forTimeInterval: 0.1) }
  }
}

/// Keeps each action's `Proceed` until ``release()``.
private final class HoldUntilReleased: Middleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var held: [Proceed] = []

  func intercept(action: CounterAction, state: CounterState, proceed: Proceed) {
    lock.withLock { held.append(proceed) }
  }

  func release() {
    for proceed in lock.withLock({ held }) { proceed() }
  }
}

/// Lets each action go on from a main-queue block 20 ms later.
private struct GoOnFromMainLater: Middleware {
  func intercept(action: CounterAction, state: CounterState, proceed: Proceed) {
    DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(20)) { proceed() }
  }
}
