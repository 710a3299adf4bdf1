import Testing

@testable import FluxCore

/// The action life cycle as a value, without threads: every row of the tables in
/// `StoreStateMachine`'s documentation.
@Suite("Store state machine")
struct StoreStateMachineTests {
  enum Tag {}
  typealias Machine = StoreStateMachine<LogState<Tag>>

  /// Where tickets made by these tests send decisions: nowhere, the tests drive the machine.
  final class NoTarget: ProceedTarget {
    let lock = Lock()
    func decide(_ ticket: ProceedTicket, serial: UInt64, goesOn: Bool) {}
    func abandon(serial: UInt64) {}
  }

  struct PassThrough: Middleware {
    typealias State = LogState<Tag>
  }

  let state = LogState<Tag>()
  let target = NoTarget()

  func machine(immediate: Bool = false, middlewares: Int = 0) -> Machine {
    var machine = Machine(
      target: (Unmanaged.passUnretained(state), LogMutations<Tag>()),
      middlewares: Array(repeating: AnyMiddleware(PassThrough()), count: middlewares), isImmediate: immediate)
    _ = machine.replaceShared(with: [])
    machine.owner = target
    return machine
  }

  func makeTicket() -> ProceedTicket { ProceedTicket(target: target, lock: target.lock) }

  func name(_ decision: Machine.Decision) -> String {
    switch decision {
    case .recorded: "recorded"
    case .resume: "resume"
    case .ignored: "ignored"
    case .secondDecision: "secondDecision"
    }
  }

  func name(_ abandonment: Machine.Abandonment) -> String {
    switch abandonment {
    case .done: "done"
    case .drainElsewhere: "drainElsewhere"
    }
  }

  func pending(_ action: Int) -> Machine.Pending { Machine.Pending(action: action, completion: nil) }

  /// Dispatches `action` to an idle `.queue`-style machine, starts the drain it asks for and
  /// hands it the action.
  func start(_ machine: inout Machine, _ action: Int) -> Machine.Handout {
    var handout: Machine.Handout?
    _ = machine.dispatch(pending(action), into: &handout)
    _ = machine.startScheduledDrain()
    _ = machine.next(into: &handout)
    return handout!
  }

  /// Starts `action` and lets its interception return undecided while a copy of its Proceed is
  /// kept: the action is held. Returns the copy.
  func hold(_ machine: inout Machine, _ action: Int) -> Proceed {
    var handout = start(&machine, action)
    var ticket = handout.ticket.take()!
    let kept = Proceed(ticket: ticket, serial: ticket.serial)
    guard case .held = machine.endInterception(&ticket, &handout.pending) else {
      Issue.record("expected the action to be held")
      return kept
    }
    return kept
  }

  /// The drain asks for more and, the queue being empty, ends.
  func finishDrain(_ machine: inout Machine) {
    var none: Machine.Handout?
    _ = machine.next(into: &none)
  }

  @Test("inv14: dispatch drains at once on .immediate, schedules one drain otherwise, queues while draining")
  func inv14_dispatchByPhase() {
    var immediate = machine(immediate: true, middlewares: 1)
    var handout: Machine.Handout?
    guard case .drainNow = immediate.dispatch(pending(1), into: &handout) else {
      Issue.record("expected drainNow")
      return
    }
    #expect(handout?.pending.action == 1)
    #expect(handout?.ticket != nil, "an interception is due")
    #expect(immediate.phase == .draining)

    var plain = machine(immediate: true)
    var none: Machine.Handout?
    guard case .commitNow = plain.dispatch(pending(1), into: &none) else {
      Issue.record("expected commitNow: no middleware, nothing to hand out")
      return
    }
    #expect(none == nil)
    #expect(plain.phase == .draining)

    var queued = machine()
    guard case .scheduleDrain = queued.dispatch(pending(1), into: &handout),
      case .queued = queued.dispatch(pending(2), into: &handout)
    else {
      Issue.record("expected one scheduled drain, then queueing")
      return
    }
    #expect(queued.queue.count == 2)
    #expect(queued.phase == .scheduled && !queued.isSettled)
    let started = queued.startScheduledDrain()
    #expect(started, "the work asked of the executor is the drain")
    #expect(queued.phase == .draining)
    let startedTwice = queued.startScheduledDrain()
    #expect(!startedTwice, "no drain starts twice")
    #expect(queued.next(into: &handout) == nil && handout?.pending.action == 1)
    handout = nil
    #expect(queued.next(into: &handout) == nil && handout?.pending.action == 2)
    handout = nil
    _ = queued.next(into: &handout)
    #expect(handout == nil)
    #expect(queued.phase == .idle)
  }

  @Test("inv15: a freed store rejects dispatches; the drain that outlives it releases the state")
  func inv15_freedPhases() {
    var idle = machine()
    let leftovers = idle.storeFreed()
    #expect(leftovers.released != nil, "nothing runs: the state goes now")
    #expect(idle.phase == .freed)
    var handout: Machine.Handout?
    guard case .rejected = idle.dispatch(pending(1), into: &handout) else {
      Issue.record("a freed store accepted an action")
      return
    }

    var scheduled = machine()
    _ = scheduled.dispatch(pending(1), into: &handout)
    let unscheduled = scheduled.storeFreed()
    #expect(unscheduled.dropped.map(\.action) == [1])
    #expect(unscheduled.released != nil, "a drain asked for and not started owns nothing: the state goes now")
    #expect(scheduled.phase == .freed)
    let lateStart = scheduled.startScheduledDrain()
    #expect(!lateStart, "the late work finds the store gone")

    var draining = machine()
    _ = draining.dispatch(pending(1), into: &handout)
    _ = draining.dispatch(pending(2), into: &handout)
    _ = draining.startScheduledDrain()
    let dropped = draining.storeFreed()
    #expect(dropped.dropped.map(\.action) == [1, 2])
    #expect(dropped.released == nil, "the running drain still owns the state")
    #expect(draining.phase == .freedWhileDraining)
    #expect(draining.next(into: &handout) != nil, "the drain releases the state")
    #expect(handout == nil)
    #expect(draining.phase == .freed)
  }

  @Test("inv14: a decision during the interception is recorded; the ticket is reused when no copy is left")
  func inv14_decisionDuringInterception() {
    var machine = machine(middlewares: 1)
    var handout = start(&machine, 1)
    var scratch: Machine.Handout?
    var ticket = handout.ticket.take()!
    let serial = ticket.serial
    #expect(
      name(machine.decide(ticket, serial: serial, goesOn: true, into: &scratch)) == "recorded")
    guard case .finish = machine.endInterception(&ticket, &handout.pending) else {
      Issue.record("expected the action to go on to its commit")
      return
    }
    #expect(handout.pending.stage == 1)
    #expect(machine.spare === ticket, "a ticket nobody else holds is kept for reuse")
    let next = start(&machine, 2)
    #expect(next.ticket === ticket)
    #expect(next.ticket?.serial != serial)
  }

  @Test("inv14: a ticket someone still holds is never reused, and its stale copy is a second decision")
  func inv14_staleCopyIsASecondDecision() {
    var machine = machine(middlewares: 1)
    var handout = start(&machine, 1)
    var scratch: Machine.Handout?
    var ticket = handout.ticket.take()!
    let copy = Proceed(ticket: ticket, serial: ticket.serial)
    _ = machine.decide(ticket, serial: copy.serial, goesOn: true, into: &scratch)
    _ = machine.endInterception(&ticket, &handout.pending)
    #expect(machine.spare == nil)
    let next = start(&machine, 2)
    #expect(next.ticket !== copy.ticket)
    var none: Machine.Handout?
    #expect(
      name(machine.decide(copy.ticket, serial: copy.serial, goesOn: true, into: &none))
        == "secondDecision")
    guard case .running = next.ticket?.phase else {
      Issue.record("the stale copy decided another action")
      return
    }
  }

  @Test("inv14: an undecided interception whose Proceed was kept holds the action until it is decided")
  func inv14_heldThenDecided() {
    var machine = machine(middlewares: 1)
    let kept = hold(&machine, 1)
    #expect(machine.held[kept.serial]?.stage == 1)
    finishDrain(&machine)
    #expect(machine.phase == .idle, "a held action does not hold up the drain")
    var resumed: Machine.Handout?
    guard
      case .resume(.scheduleDrain) = machine.decide(
        kept.ticket, serial: kept.serial, goesOn: false, into: &resumed)
    else {
      Issue.record("expected the held action to be resubmitted")
      return
    }
    #expect(machine.held.isEmpty)
    #expect(machine.queue.count == 1)
    #expect(
      name(machine.decide(kept.ticket, serial: kept.serial, goesOn: true, into: &resumed))
        == "secondDecision")
  }

  @Test("inv14: an undecided interception whose Proceed nobody kept is cancelled at once")
  func inv14_undecidedAndUnkeptIsCancelled() {
    var machine = machine(middlewares: 1)
    var handout = start(&machine, 1)
    var ticket = handout.ticket.take()!
    guard case .finish = machine.endInterception(&ticket, &handout.pending) else {
      Issue.record("expected the cancel hooks to run now")
      return
    }
    #expect(handout.pending.stage == Machine.Pending.cancelled)
    #expect(machine.held.isEmpty)
  }

  @Test("inv15: a store freed during an interception drops the action; a later decision is ignored")
  func inv15_freedDuringInterception() {
    var machine = machine(middlewares: 1)
    var handout = start(&machine, 1)
    var ticket = handout.ticket.take()!
    let kept = Proceed(ticket: ticket, serial: ticket.serial)
    _ = machine.storeFreed()
    guard case .dropped = machine.endInterception(&ticket, &handout.pending) else {
      Issue.record("expected the action to be dropped")
      return
    }
    var none: Machine.Handout?
    #expect(
      name(machine.decide(kept.ticket, serial: kept.serial, goesOn: true, into: &none))
        == "ignored")
    #expect(machine.held.isEmpty)
  }

  @Test("inv15: freeing the store drops held actions, the spare ticket, the pipeline and the own middleware")
  func inv15_freedReleasesEverything() {
    var machine = machine(middlewares: 1)
    let kept = hold(&machine, 1)
    finishDrain(&machine)
    machine.spare = makeTicket()
    let leftovers = machine.storeFreed()
    #expect(leftovers.dropped.map(\.action) == [1])
    #expect(leftovers.spare != nil && leftovers.pipeline != nil && leftovers.middlewares.count == 1)
    #expect(machine.spare == nil && machine.pipeline == nil && machine.middlewares.isEmpty && machine.target == nil)
    #expect(name(machine.abandon(serial: kept.serial)) == "done")
  }

  @Test("inv16: a Proceed released undecided cancels through the running drain, or later when none runs")
  func inv16_abandonment() {
    var machine = machine(middlewares: 1)
    let kept = hold(&machine, 1)
    #expect(name(machine.abandon(serial: kept.serial)) == "done", "the running drain takes the cancellation")
    #expect(machine.queue.count == 1)

    var idle = self.machine(middlewares: 1)
    let otherKept = hold(&idle, 2)
    finishDrain(&idle)
    #expect(idle.isSettled == false, "a held action is under way")
    guard case .drainElsewhere = idle.abandon(serial: otherKept.serial) else {
      Issue.record("no drain runs: the cancellation must start elsewhere")
      return
    }
    #expect(idle.queue.storage[idle.queue.head]?.stage == Machine.Pending.cancelled)
    #expect(idle.phase == .awaitingWorker)
    #expect(!idle.isSettled, "the cancellation is under way until its drain has run")
    let asks = idle.workerAsksExecutor()
    #expect(asks && idle.phase == .scheduled, "the worker asks the executor")
    let asksAgain = idle.workerAsksExecutor()
    #expect(!asksAgain)
  }

  @Test("inv14: a dispatch that finds the worker not yet there asks the executor itself; the worker then does nothing")
  func inv14_dispatchAsksTheExecutorBeforeTheWorker() {
    var machine = machine(middlewares: 1)
    let kept = hold(&machine, 1)
    finishDrain(&machine)
    guard case .drainElsewhere = machine.abandon(serial: kept.serial) else {
      Issue.record("expected a drain asked of a worker")
      return
    }
    var handout: Machine.Handout?
    guard case .scheduleDrain = machine.dispatch(pending(2), into: &handout) else {
      Issue.record("the dispatch did not ask the executor")
      return
    }
    #expect(machine.phase == .scheduled && machine.queue.count == 2)
    let workerAsks = machine.workerAsksExecutor()
    #expect(!workerAsks, "the executor was asked already")
  }

  @Test("inv10: on .immediate, a dispatch that finds a drain asked for becomes the drain, after what waits")
  func inv10_immediateDispatchTakesOverAScheduledDrain() {
    var machine = machine(immediate: true, middlewares: 1)
    var handout: Machine.Handout?
    _ = machine.dispatch(pending(1), into: &handout)  // drains now; its interception keeps a copy
    var ticket = handout!.ticket.take()!
    let kept = Proceed(ticket: ticket, serial: ticket.serial)
    guard case .held = machine.endInterception(&ticket, &handout!.pending) else {
      Issue.record("expected the action to be held")
      return
    }
    handout = nil
    finishDrain(&machine)
    guard case .drainElsewhere = machine.abandon(serial: kept.serial) else {
      Issue.record("expected a drain asked for")
      return
    }
    guard case .drainNow = machine.dispatch(pending(2), into: &handout) else {
      Issue.record("the dispatching thread did not become the drain")
      return
    }
    #expect(handout?.pending.action == 1 && handout?.pending.stage == Machine.Pending.cancelled, "what waited first")
    #expect(machine.queue.storage[machine.queue.head]?.action == 2)
    let lateStart = machine.startScheduledDrain()
    #expect(!lateStart, "the drain asked for finds its place taken")
  }

  @Test("inv14: a held action keeps the pipeline it started with")
  func inv14_heldKeepsPipeline() {
    var machine = machine(middlewares: 1)
    let started = machine.pipeline
    let kept = hold(&machine, 1)
    let replaced = machine.replaceShared(with: [])
    #expect(replaced === started)
    #expect(machine.held[kept.serial]?.pipeline === started)
  }

  /// Runs `action` through a one-middleware machine whose interception decides with `decide`,
  /// and returns the ticket the next action is handed.
  func ticketAfterDeciding(_ decide: (Proceed) -> Void) -> ProceedTicket? {
    var machine = machine(middlewares: 1)
    var handout = start(&machine, 1)
    var ticket = handout.ticket.take()!
    decide(Proceed(ticket: ticket, serial: ticket.serial))
    guard case .finish = machine.endInterception(&ticket, &handout.pending) else {
      Issue.record("expected the action to finish")
      return nil
    }
    finishDrain(&machine)
    let next = start(&machine, 2)
    #expect(next.pending.stage == (next.ticket == nil ? 1 : 0))
    return next.ticket
  }

  @Test("inv14: a stage whose own type decided by default is skipped from the next action on")
  func inv14_defaultStageSkippedOnceLearned() {
    #expect(ticketAfterDeciding { $0.proceedByDefault(of: DefaultInterception<PassThrough>.self) } == nil)
  }

  @Test("inv14: a stage that proceeded otherwise, or by another type's or protocol's default, is never skipped")
  func inv14_otherDecisionsAreNotLearned() {
    struct Other {}
    #expect(ticketAfterDeciding { $0() } != nil)
    #expect(ticketAfterDeciding { $0.proceedByDefault(of: DefaultInterception<Other>.self) } != nil)
    #expect(ticketAfterDeciding { $0.proceedByDefault(of: SharedDefaultInterception<PassThrough>.self) } != nil)
    #expect(ticketAfterDeciding { $0.proceedByDefault(of: PassThrough.self) } != nil)
  }

  @Test("inv10: the lane may open only on an idle, live .immediate store with nothing left to intercept")
  func inv10_laneMayOpenOnlyWhenNothingButACommitIsDue() {
    #expect(machine(immediate: true).laneMayOpen, "no middleware")
    #expect(!machine().laneMayOpen, "not on .immediate")
    let intercepting = machine(immediate: true, middlewares: 1)
    #expect(!intercepting.laneMayOpen, "its middleware has not been seen passing through yet")
    intercepting.pipeline!.passesThrough[0] = true
    #expect(intercepting.laneMayOpen, "every stage passes through")
    var draining = machine(immediate: true)
    var handout: Machine.Handout?
    _ = draining.dispatch(pending(1), into: &handout)
    #expect(!draining.laneMayOpen, "a drain runs")
    finishDrain(&draining)
    #expect(draining.laneMayOpen)
    var freed = machine(immediate: true)
    _ = freed.storeFreed()
    #expect(!freed.laneMayOpen, "the store is gone")
  }

  @Test("inv10: a fast commit handed over becomes the drain: what comes meanwhile queues behind it")
  func inv10_adoptedFastCommitIsTheDrain() {
    var machine = machine(immediate: true)
    machine.adoptFastCommit()
    #expect(machine.phase == .draining)
    var handout: Machine.Handout?
    guard case .queued = machine.dispatch(pending(2), into: &handout) else {
      Issue.record("an action dispatched during the adopted commit did not queue")
      return
    }
    #expect(machine.next(into: &handout) == nil && handout?.pending.action == 2)
    handout = nil
    finishDrain(&machine)
    #expect(machine.phase == .idle && machine.laneMayOpen)

    var freed = self.machine(immediate: true)
    freed.adoptFastCommit()
    let leftovers = freed.storeFreed()
    #expect(leftovers.released == nil, "the adopted commit still runs against the state")
    #expect(freed.next(into: &handout) != nil, "its drain releases the state")
  }
}
