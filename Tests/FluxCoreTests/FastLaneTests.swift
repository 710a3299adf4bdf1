import Dispatch
import Foundation
import Testing

@testable import FluxCore

/// A middleware with hooks only (so it keeps the default interception) that records them, and
/// can block in `willCommit` of one action.
private final class Hooks<Tag>: Middleware, @unchecked Sendable {
  let events = Recorder<String>()
  let blockAt: Int?
  let entered = DispatchSemaphore(value: 0)
  let resume = DispatchSemaphore(value: 0)
  let flag: DeallocFlag

  init(blockAt: Int? = nil, flag: DeallocFlag = DeallocFlag()) {
    self.blockAt = blockAt
    self.flag = flag
  }

  deinit { flag.markFreed() }

  func willCommit(action: Int, state: LogState<Tag>) {
    events.append("will \(action)")
    if action == blockAt {
      entered.signal()
      resume.wait()
    }
  }

  func didCommit(action: Int, state: LogState<Tag>) { events.append("did \(action)") }
}

/// The same, shared: it watches the stores of `LogState<Tag>` only.
private final class SharedHooks<Tag>: SharedMiddleware, @unchecked Sendable {
  let hooks: Hooks<Tag>

  init(blockAt: Int? = nil, flag: DeallocFlag) {
    hooks = Hooks(blockAt: blockAt, flag: flag)
  }

  func willCommit(action: any Sendable, state: any State) {
    guard let state = state as? LogState<Tag>, let action = action as? Int else { return }
    hooks.willCommit(action: action, state: state)
  }

  func didCommit(action: any Sendable, state: any State) {
    guard let state = state as? LogState<Tag>, let action = action as? Int else { return }
    hooks.didCommit(action: action, state: state)
  }
}

/// The way past the store's lock (`FastLane`): an idle `.immediate` store with nothing to
/// intercept commits on the dispatching thread without its lock, and hands over to the lock's
/// machine whenever anything else happens during that commit.
@Suite("The fast lane of .immediate stores")
struct FastLaneTests {
  enum Open {}
  enum HandOver {}
  enum Freed {}
  enum Added {}
  enum Removed {}
  enum Contention {}
  enum Abandoned {}
  enum Decided {}

  /// Whether `store`'s lane is open: on Linux, once nothing is running and nothing intercepts.
  func laneIsOpen<S>(_ store: Store<S>) -> Bool {
    store.core.lane.state == FastLane.open
  }

  /// Waits for `store`'s lane to be open, where lanes exist, dispatching the filler action 0
  /// meanwhile. Tests of other suites run in parallel and register shared middleware that
  /// intercepts, which closes every lane for as long as it stays; each change of the shared
  /// middleware makes a new pipeline, whose stages are seen passing through again by the next
  /// action.
  func laneOpens<Tag>(_ store: Store<LogState<Tag>>) -> Bool {
    !FastLane.exists
      || waitUntil {
        if laneIsOpen(store) { return true }
        store.actions.dispatch(action: 0)
        return laneIsOpen(store)
      }
  }

  /// `values` without the filler actions of `laneOpens`.
  func withoutFillers(_ values: [Int]) -> [Int] { values.filter { $0 != 0 } }

  /// `events` without those of the filler actions of `laneOpens`.
  func withoutFillers(_ events: [String]) -> [String] { events.filter { !$0.hasSuffix(" 0") } }

  @Test("the lane's transitions, as its table says", .enabled(if: FastLane.exists, "Apple systems have no lane"))
  func transitions() {
    let lane = FastLane()
    var states: [UInt8] = []
    func record(_ ok: Bool) -> Bool {
      states.append(lane.state)
      return ok
    }
    let closedAtFirst = record(!lane.claim())
    lane.open()
    let claimed = record(lane.claim())
    let secondClaimRefused = record(!lane.claim())
    let finished = record(lane.finish())
    let closingOpen = lane.close()
    let claimOnClosedRefused = record(!lane.claim())
    lane.open()
    let claimedAgain = lane.claim()
    let closingClaimed = lane.close()
    let closingHandedOver = lane.close()
    let finishRefused = record(!lane.finish())
    let claimOnHandedOverRefused = !lane.claim()
    lane.shut()
    let shut = record(true)
    #expect(closedAtFirst && claimed && secondClaimRefused && finished && claimOnClosedRefused && claimedAgain)
    #expect(finishRefused && claimOnHandedOverRefused && shut)
    #expect(
      states == [
        FastLane.closed, FastLane.claimed, FastLane.claimed, FastLane.open, FastLane.closed, FastLane.handedOver,
        FastLane.closed,
      ])
    #expect(closingOpen == .closed && closingClaimed == .handedOver && closingHandedOver == .closed)
  }

  @Test(
    "inv10: an idle .immediate store opens its lane; middleware that passes through keeps it open",
    .enabled(if: FastLane.exists, "Apple systems have no lane"))
  func inv10_laneOpensWhenNothingIntercepts() {
    let hooks = Hooks<Open>()
    let store = Store(
      state: LogState<Open>(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(hooks)])
    #expect(!laneIsOpen(store), "its middleware has not been seen passing through yet")
    store.actions.dispatch(action: 1)
    #expect(laneOpens(store))
    store.actions.dispatch(action: 2)
    #expect(withoutFillers(hooks.events.values) == ["will 1", "did 1", "will 2", "did 2"])
    let queued = Store(state: LogState<Open>(), mutations: .init(), executor: .queue(.global()))
    #expect(!laneIsOpen(queued), "only .immediate stores commit on the dispatching thread")
  }

  @Test("inv10: a dispatch from another thread during a fast commit is handed over and runs next, in order")
  func inv10_dispatchDuringAFastCommitIsHandedOver() throws {
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let threads = Recorder<(Int, ObjectIdentifier)>()
    let state = LogState<HandOver> { action in
      threads.append((action, ObjectIdentifier(Thread.current)))
      if action == 1 {
        entered.signal()
        resume.wait()
      }
    }
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    #expect(laneOpens(store))
    let firstThread = Box<ObjectIdentifier?>(nil)
    let firstReturned = DispatchSemaphore(value: 0)
    Thread {
      firstThread.value = ObjectIdentifier(Thread.current)
      store.actions.dispatch(action: 1)
      firstReturned.signal()
    }.start()
    entered.wait()
    #expect(returnsInTime { store.actions.dispatch(action: 2) }, "a dispatch during a commit never waits for it")
    #expect(withoutFillers(state.committed.values) == [1], "the handed-over action waits for the running commit")
    resume.signal()
    firstReturned.wait()
    #expect(withoutFillers(state.committed.values) == [1, 2])
    let committers = threads.values.filter { $0.0 != 0 }.map(\.1)
    #expect(committers == [firstThread.value, firstThread.value], "the committing thread ran both")
    #expect(state.overlapCount == 0)
    #expect(laneOpens(store), "the lane opens again once the drain ends")
    store.actions.dispatch(action: 3)
    #expect(withoutFillers(state.committed.values) == [1, 2, 3], "committed inline again")
  }

  @Test("inv12: a store freed during a fast commit: that commit ends, the handed-over action is dropped")
  func inv12_storeFreedDuringAFastCommit() {
    let flag = DeallocFlag()
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let answers = Recorder<Bool>()
    var store: Store<LogState<Freed>>?
    let committed: Recorder<Int>
    do {
      let state = LogState<Freed> { [tracked = Tracked(flag)] action in
        _ = tracked
        if action == 1 {
          entered.signal()
          resume.wait()
        }
      }
      committed = state.committed
      store = Store(state: state, mutations: .init(), executor: .immediate)
    }
    let actions = store!.actions
    let firstReturned = DispatchSemaphore(value: 0)
    Thread {
      actions.dispatch(action: 1) { answers.append($0) }
      firstReturned.signal()
    }.start()
    entered.wait()
    actions.dispatch(action: 2) { answers.append($0) }
    store = nil
    #expect(!flag.isFreed, "the state went while its commit was running")
    resume.signal()
    firstReturned.wait()
    #expect(waitUntil { flag.isFreed })
    #expect(committed.values == [1])
    #expect(Set(answers.values) == [true, false], "1 committed, 2 dropped")
    actions.dispatch(action: 3) { answers.append($0) }
    #expect(answers.values.count == 3 && answers.values.last == false, "a freed store refuses")
  }

  @Test("inv14: middleware added during a fast commit sees the actions dispatched after it, not that commit")
  func inv14_middlewareAddedDuringAFastCommitSeesLaterActions() {
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let state = LogState<Added> { action in
      if action == 1 {
        entered.signal()
        resume.wait()
      }
    }
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    let firstReturned = DispatchSemaphore(value: 0)
    Thread {
      store.actions.dispatch(action: 1)
      firstReturned.signal()
    }.start()
    entered.wait()
    let shared = SharedHolder<Added>()
    let registration = SharedMiddlewares.add(shared)
    defer { registration.remove() }
    store.actions.dispatch(action: 2)
    resume.signal()
    firstReturned.wait()
    #expect(state.committed.values == [1, 2])
    #expect(shared.intercepted.values == [2])
    store.actions.dispatch(action: 3)
    #expect(shared.intercepted.values == [2, 3])
    if FastLane.exists { #expect(!laneIsOpen(store), "an intercepting middleware closes the lane") }
  }

  @Test("inv15: middleware removed during a fast commit finishes that commit, and is freed after it")
  func inv15_middlewareRemovedDuringAFastCommitOutlivesIt() {
    let flag = DeallocFlag()
    let state = LogState<Removed>()
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    var events: Recorder<String>?
    var registration: SharedMiddlewareRegistration?
    var resume: DispatchSemaphore?
    do {
      let shared = SharedHooks<Removed>(blockAt: 2, flag: flag)
      events = shared.hooks.events
      resume = shared.hooks.resume
      registration = SharedMiddlewares.add(shared)
      store.actions.dispatch(action: 1)  // seen passing through: the lane opens
      #expect(laneOpens(store))
      let firstReturned = DispatchSemaphore(value: 0)
      Thread {
        store.actions.dispatch(action: 2)
        firstReturned.signal()
      }.start()
      shared.hooks.entered.wait()
      registration?.remove()
      registration = nil
      _ = consume shared
      #expect(!flag.isFreed, "the middleware went while its hook was running")
      resume?.signal()
      firstReturned.wait()
    }
    #expect(events.map { withoutFillers($0.values) } == ["will 1", "did 1", "will 2", "did 2"])
    #expect(waitUntil { flag.isFreed }, "the lane let its pipeline go")
    store.actions.dispatch(action: 3)
    #expect(withoutFillers(state.committed.values) == [1, 2, 3])
    #expect(events.map { withoutFillers($0.values).count } == 4, "a removed middleware sees nothing more")
  }

  @Test(
    "inv10: many threads dispatching, reentrant dispatches and middleware changing: each action once, in order")
  func inv10_laneUnderContention() {
    let threads = 4
    let perThread = 1_500
    let box = Box<Store<LogState<Contention>>?>(nil)
    let state = LogState<Contention> { action in
      // Every 10th action dispatches a follow-up from inside its commit.
      if action >= 0, action.isMultiple(of: 10) { box.value?.actions.dispatch(action: -1 - action) }
    }
    let hooks = Hooks<Contention>()
    box.value = Store(state: state, mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(hooks)])
    let actions = box.value!.actions
    let stop = Counter()
    let toggled = Counter()
    let togglerDone = DispatchSemaphore(value: 0)
    let toggler = Thread {
      let holder = SharedHolder<Contention>()
      let watcher = SharedHooks<Contention>(flag: DeallocFlag())
      while stop.value == 0 {
        let registration =
          toggled.increment().isMultiple(of: 2)
          ? SharedMiddlewares.add(holder) : SharedMiddlewares.add(watcher)
        usleep(50)
        registration.remove()
      }
      togglerDone.signal()
    }
    toggler.start()
    // On a busy machine the racing threads could all be done before the toggler first runs.
    #expect(waitUntil { toggled.value > 0 }, "the middleware changes before the race starts")
    race(threads: threads, iterations: perThread) { thread, index in
      actions.dispatch(action: thread * perThread + index)
    }
    stop.increment()
    togglerDone.wait()
    let committed = state.committed.values
    let plain = committed.filter { $0 >= 0 }
    #expect(plain.count == threads * perThread, "each action committed once")
    #expect(Set(plain).count == plain.count)
    for thread in 0..<threads {
      let own = plain.filter { $0 / perThread == thread }
      let firstOutOfOrder = zip(own, own.dropFirst()).first { $0 > $1 }
      #expect(firstOutOfOrder == nil, "thread \(thread): \(firstOutOfOrder.map { "\($0.1) after \($0.0)" } ?? "")")
    }
    let followUps = committed.filter { $0 < 0 }
    #expect(followUps.count == plain.filter { $0.isMultiple(of: 10) }.count)
    #expect(state.overlapCount == 0)
    #expect(hooks.events.values.count == 2 * committed.count, "the store's hooks ran around every commit")
    #expect(toggled.value > 0)
    box.value = nil
  }

  @Test("inv14: a held action abandoned once the lane is open is cancelled, never committed by the lane")
  func inv14_abandonedHeldActionNeverTakesTheLane() {
    let shared = SharedHolder<Abandoned>(hold: { $0 == 1 })
    let registration = SharedMiddlewares.add(shared)
    let state = LogState<Abandoned>()
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    let answers = Recorder<Bool>()
    store.actions.dispatch(action: 1) { answers.append($0) }
    registration.remove()
    #expect(laneOpens(store), "the held action does not keep the lane closed")
    _ = shared.take(1)  // the last copy of its Proceed goes, undecided
    #expect(waitUntil { answers.values == [false] }, "the abandoned action is cancelled")
    #expect(!state.committed.values.contains(1))
  }

  @Test("inv14: held actions decided once the lane is open resume through the machine, as decided")
  func inv14_heldActionsDecidedWhileTheLaneIsOpen() {
    let shared = SharedHolder<Decided>(hold: { $0 == 1 || $0 == 2 })
    let registration = SharedMiddlewares.add(shared)
    let state = LogState<Decided>()
    let store = Store(state: state, mutations: .init(), executor: .immediate)
    let answers = Recorder<(Int, Bool)>()
    for action in [1, 2] { store.actions.dispatch(action: action) { answers.append((action, $0)) } }
    registration.remove()
    #expect(laneOpens(store))
    shared.take(1)?()
    shared.take(2)?.cancel()
    store.actions.dispatch(action: 3) { answers.append((3, $0)) }
    #expect(answers.values.map(\.0) == [1, 2, 3] && answers.values.map(\.1) == [true, false, true])
    #expect(withoutFillers(state.committed.values) == [1, 3])
    #expect(laneOpens(store), "and the lane opens again")
  }
}
