import Dispatch
import FluxCore
import FluxReactive
import Foundation
import Testing

@testable import FluxTesting

/// The tester where other threads are at work: a store committing on its queue while a check
/// fails, a worker thread that submits the drain cancelling an abandoned action.
@Suite("StoreTester beside other threads")
struct StoreTesterThreadTests {
  @Test("a failed state check shows the state as a commit left it, never read while the store commits on its queue")
  func failedStateCheckIsNotReadDuringACommit() async {
    for _ in 0..<5 {
      let state = WatchedState()
      let tester = StoreTester<WatchedState>(
        state: state, mutations: .init(), executor: .queue(DispatchQueue(label: "watched")))
      await withKnownIssue {
        await tester.dispatch(.add(1)) { _ in
          // Another commit starts, and is still running when the check fails.
          tester.actions.dispatch(action: .slow)
          state.watch.started.wait()
          return false
        }
      } matching: { issue in
        issue.comments.map(\.rawValue).joined()
          == "after dispatching add(1): the state is not as expected; it is WatchedState(count: 1, watch: watch)"
      }
      state.watch.release.signal()
      await tester.expect(committed: [.slow])
      tester.finish()
      #expect(!state.watch.wasDescribedDuringACommit, "the failure read the state while a commit ran")
    }
  }

  @Test("a failed state check shows the state a cancel left too, and does not read it while an action is held")
  func failedStateCheckAfterACancelOrWhileHeld() async {
    let holder = HoldsHeld()
    let tester = StoreTester<WatchedState>(state: .init(), mutations: .init(), middlewares: [AnyMiddleware(holder)])
    await tester.dispatch(.add(2))
    await withKnownIssue {
      await tester.dispatch(.cancelled, committed: [], cancelled: [.cancelled]) { $0.state.count.value == 5 }
    } matching: { issue in
      issue.comments.map(\.rawValue).joined()
        == "after dispatching cancelled: the state is not as expected; it is WatchedState(count: 2, watch: watch)"
    }
    await withKnownIssue {
      await tester.dispatch(.held, committed: []) { $0.state.count.value == 5 }
    } matching: { issue in
      issue.comments.map(\.rawValue).joined()
        == "after dispatching held: the state is not as expected; it is not shown: an action is still under way "
        + "in the store, and its commit may change the state while it is read"
    }
    holder.release()
    await tester.expect(committed: [.held])
    tester.finish()
  }

  @Test("on a manual executor, an action whose Proceed is let go undecided is cancelled before the assertion looks")
  func abandonedProceedOnAManualExecutorIsCancelledBeforeTheAssertion() async {
    for _ in 0..<50 {
      let manual = ManualExecutor()
      let keeper = KeepsProceed()
      let tester = StoreTester<CounterState>(
        state: .init(), mutations: .init(), executor: manual, middlewares: [AnyMiddleware(keeper)])
      await tester.dispatch(.add(1), committed: [])  // held: neither committed nor cancelled yet
      keeper.letGo()  // undecided: a worker thread asks the executor for the drain that cancels it
      await tester.expect(cancelled: [.add(1)])
      tester.expect(reading: \.count.value, equals: 0)
      tester.finish()
    }
  }

  @Test("finish on a manual executor counts the drain a worker thread still owes an abandoned action")
  func finishCountsTheDrainOfAnAbandonedAction() async {
    for _ in 0..<5 {
      let manual = ManualExecutor()
      let keeper = KeepsProceed()
      let tester = StoreTester<CounterState>(
        state: .init(), mutations: .init(), executor: manual, middlewares: [AnyMiddleware(keeper)])
      await tester.dispatch(.add(1), committed: [])
      keeper.letGo()
      withKnownIssue {
        tester.finish()
      } matching: { issue in
        issue.comments.map(\.rawValue).joined()
          == "at the end of the test, 1 piece of work still waits on the manual executor (actions no assertion "
          + "ran: await an assertion first)"
      }
      await tester.expect(cancelled: [.add(1)])
      tester.finish()
    }
  }
}

/// A state whose `slow` commit waits for the test, and whose `watch` notes a description made
/// while a commit runs.
private final class WatchedState: State {
  typealias Action = WatchedAction
  typealias Mutations = WatchedMutations

  let count = Variable(0)
  let watch = CommitWatch()
}

private enum WatchedAction: Equatable, Sendable {
  case add(Int)
  case slow
  case cancelled
  case held
}

private struct WatchedMutations: Mutations {
  func commit(action: WatchedAction, state: WatchedState) {
    switch action {
    case .add(let amount): state.count.modify { $0 += amount }
    case .slow: state.watch.commitSlowly()
    case .cancelled, .held: break
    }
  }
}

/// Notes whether it was described while a `slow` commit ran.
private final class CommitWatch: CustomDebugStringConvertible, @unchecked Sendable {
  // `isCommitting` and `describedDuringACommit` are guarded by `lock`; the semaphores are
  // thread-safe.
  private let lock = NSLock()
  private var isCommitting = false
  private var describedDuringACommit = false
  /// Signalled when a slow commit has started.
  let started = DispatchSemaphore(value: 0)
  /// Signalled by the test to let the slow commit end.
  let release = DispatchSemaphore(value: 0)

  var wasDescribedDuringACommit: Bool { lock.withLock { describedDuringACommit } }

  var debugDescription: String {
    lock.withLock { if isCommitting { describedDuringACommit = true } }
    return "watch"
  }

  func commitSlowly() {
    lock.withLock { isCommitting = true }
    started.signal()
    _ = release.wait(timeout: .now() + .seconds(30))
    lock.withLock { isCommitting = false }
  }
}

/// Cancels `cancelled`, and holds `held` until ``release()``.
private final class HoldsHeld: Middleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var held: [Proceed] = []

  func intercept(action: WatchedAction, state: WatchedState, proceed: Proceed) {
    switch action {
    case .cancelled: proceed.cancel()
    case .held: lock.withLock { held.append(proceed) }
    case .add, .slow: proceed()
    }
  }

  func release() {
    for proceed in lock.withLock({ held }) { proceed() }
  }
}

/// Keeps the `Proceed` of each action until ``letGo()``, which drops it undecided.
private final class KeepsProceed: Middleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var kept: [Proceed] = []

  func intercept(action: CounterAction, state: CounterState, proceed: Proceed) {
    lock.withLock { kept.append(proceed) }
  }

  func letGo() {
    let dropped = lock.withLock {
      defer { kept = [] }
      return kept
    }
    withExtendedLifetime(dropped) {}  // the last copies go here, after the lock
  }
}
