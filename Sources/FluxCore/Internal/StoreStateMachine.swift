/// The life of every action of one store, as a value: events in, what to do out.
///
/// An action is queued, handed to the drain, intercepted stage by stage, possibly held by a
/// middleware, and then has exactly one end: committed, cancelled (every `didCancel` hook sees
/// it) or dropped with its store (its waiter learns `false`, no hook runs). This type decides
/// every transition; ``StoreCore`` owns the lock around it and does what each transition
/// returns, after releasing the lock. No method here runs user code, releases a user object,
/// or blocks, so everything here can be unit-tested without threads.
///
/// The store has a phase; each interception has a ``ProceedTicket/Phase`` kept in its ticket,
/// whose fields are guarded by the same lock and so belong to this machine.
///
/// | store phase ↓ / event →  | `dispatch`                                   | `next` (drain asks)                  | `storeFreed`                       |
/// |--------------------------|----------------------------------------------|--------------------------------------|------------------------------------|
/// | `idle`                   | `.immediate`: → `draining`, drain now; else → `scheduled`, schedule | (no drain runs) | → `freed`; drop all, release state |
/// | `awaitingWorker`         | `.immediate`: → `draining`, drain now; else → `scheduled`, schedule | (no drain runs) | → `freed`; drop all, release state |
/// | `scheduled`              | queue it (`.immediate`: → `draining`, drain now) | (no drain runs)                  | → `freed`; drop all, release state |
/// | `draining`               | queue it                                     | hand out the front, or → `idle`      | → `freedWhileDraining`; drop all   |
/// | `freedWhileDraining`     | reject (`false`)                             | → `freed`; release state             | (once only)                        |
/// | `freed`                  | reject (`false`)                             | (no drain runs: a late one ends)     | (once only)                        |
///
/// A drain asked for but not started (`awaitingWorker`, `scheduled`) owns nothing: if the store
/// is freed first, the state and the mutations go at once, whether or not the work asked for
/// ever runs (an executor may drop it). The work starts the drain only if it finds the machine
/// still waiting for it (``startScheduledDrain()``, `→ draining`). An abandoned action's
/// cancellation asks a worker thread, which asks the executor (`awaitingWorker → scheduled`,
/// ``workerAsksExecutor()``), because the executor may run work inline, in the code that
/// released the last copy of the ``Proceed``. A dispatch meanwhile does not wait for that
/// worker: on ``Executor/immediate`` it becomes the drain, as it would from `idle`; on other
/// executors it asks the executor itself, as from `idle` (so a manual executor has the work at
/// once, and `.mainThread` on the main queue drains inline). The late worker or work then does
/// nothing.
///
/// | ticket phase ↓ / event → | `decide` (proceed or cancel)          | `endInterception` (drain)            | `abandon` (last copy released)     |
/// |--------------------------|---------------------------------------|--------------------------------------|------------------------------------|
/// | `running`                | → `decided`                           | → `held`; the action waits by serial | (cannot happen: the drain holds it) |
/// | `decided`                | second decision: stop                 | → `done`; go on, cancel, or drop     | (nothing waits)                    |
/// | `held`                   | → `done`; resubmit, or ignore if freed | —                                    | queue cancelled (idle: → `awaitingWorker`, drain from elsewhere), or ignore |
/// | `done`, `idle`           | second decision: stop                 | —                                    | (nothing waits)                    |
///
/// A decision names its action by serial: a ``Proceed`` carries the serial it was made for, and
/// a ticket is reused for a later serial only once it is decided and no ``Proceed`` copy of it
/// is left, so a stale decision is always a second decision, never another action's first.
/// A held action keeps the ``MiddlewarePipeline`` it started with, and resumes in it.
///
/// Moving an action to a stage skips the stages its pipeline knows to pass through (a
/// middleware that keeps the default `intercept`, seen deciding by default once, in
/// `endInterception`): they get no ticket, as if they had proceeded at once.
///
/// While the machine is idle and ``laneMayOpen``, the store lets dispatching threads commit
/// without its lock, through its ``FastLane``: such an action needs nothing from this machine.
/// A fast commit still running when the lock is next taken becomes this machine's drain
/// (``adoptFastCommit()``, `idle → draining`), so every row above holds with it counted in.
@usableFromInline
struct StoreStateMachine<State: FluxCore.State> {
  /// What commits run against. The state is lent to each commit without a retain: the machine
  /// owns one retain of it, released only once the store is freed and no drain runs.
  @usableFromInline
  typealias Target = (state: Unmanaged<State>, mutations: State.Mutations)

  /// An action on its way, and who waits for it.
  @usableFromInline
  struct Pending: Sendable {
    @usableFromInline
    var action: State.Action
    /// The next interceptor to run, or ``cancelled`` when only the cancel hooks remain.
    @usableFromInline
    var stage: Int
    @usableFromInline
    var completion: (@Sendable (Bool) -> Void)?
    /// The middleware the action started with; set when it is first handed to the drain.
    @usableFromInline
    var pipeline: MiddlewarePipeline<State>?
    /// What happened to the action on its way, for a store that traces its actions: made by a
    /// global dispatch, or when a middleware holds or cancels the action. `nil` otherwise.
    @usableFromInline
    var trace: ActionTrace?

    @inlinable
    init(action: State.Action, completion: (@Sendable (Bool) -> Void)?, trace: ActionTrace? = nil) {
      self.action = action
      self.stage = 0
      self.completion = completion
      self.pipeline = nil
      self.trace = trace
    }

    /// The action's trace, made now if it has none.
    @usableFromInline
    mutating func traced() -> ActionTrace {
      if let trace { return trace }
      let made = ActionTrace(dispatch: 0)
      trace = made
      return made
    }

    @usableFromInline
    static var cancelled: Int { -1 }
  }

  @usableFromInline
  enum Phase: Equatable {
    /// No drain runs or is scheduled.
    case idle
    /// A worker thread is asked to ask the executor for a drain (after an abandonment); it will
    /// take every queued action.
    case awaitingWorker
    /// A drain is asked of the executor and has not started; it will take every queued action.
    case scheduled
    /// A drain runs; it takes every queued action.
    case draining
    /// The store is gone, and a drain still runs: it releases the state as it ends.
    case freedWhileDraining
    /// The store is gone and nothing runs.
    case freed
  }

  /// What the dispatching thread does with an action it submitted.
  @usableFromInline
  enum Submission {
    /// The store is gone: tell the waiter `false`.
    case rejected(Pending)
    /// Queued for the running (or scheduled) drain.
    case queued
    /// Queued; ask the executor for a drain.
    case scheduleDrain
    /// The caller is the drain now (``Executor/immediate``): process the handout, then drain.
    case drainNow
    /// The caller is the drain now, for a store without middleware: commit the action it
    /// submitted against this target, then drain. (No handout: the hot path copies nothing.)
    case commitNow(Target)
  }

  /// An action handed to the drain, with what it needs.
  @usableFromInline
  struct Handout {
    @usableFromInline
    var pending: Pending
    @usableFromInline
    let target: Target
    /// The ticket for the interception at `pending.stage`, when one is due.
    @usableFromInline
    var ticket: ProceedTicket?

    @inlinable
    init(pending: Pending, target: Target, ticket: ProceedTicket?) {
      self.pending = pending
      self.target = target
      self.ticket = ticket
    }
  }

  /// What the drain does once an interception has returned.
  @usableFromInline
  enum AfterInterception {
    /// Go on with the next interceptor, with this ticket.
    case intercept(ProceedTicket)
    /// Every interceptor proceeded: commit (or, for `stage == cancelled`, run `didCancel`).
    case finish
    /// Nobody decided yet: the action waits; the drain goes on with the queue.
    case held
    /// The store was freed meanwhile: tell the waiter `false`.
    case dropped
  }

  /// What a decision made through a ``Proceed`` leads to.
  @usableFromInline
  enum Decision {
    /// Made during the interception: the drain picks it up.
    case recorded
    /// A held action goes on (or to its cancel hooks): submit it.
    case resume(Submission)
    /// The store is gone: nothing to do.
    case ignored
    /// This action was decided already: a programming error.
    case secondDecision
  }

  /// What releasing the last copy of an undecided held ``Proceed`` leads to.
  @usableFromInline
  enum Abandonment {
    /// Nothing (the store is gone), or the cancellation joined the queue of the drain that runs
    /// or is asked for.
    case done
    /// No drain ran: the cancellation is queued and the machine `awaitingWorker`; ask for a
    /// drain from a worker thread, never in the releasing stack.
    case drainElsewhere
  }

  /// What is left to release once the store is freed, after the lock.
  @usableFromInline
  struct Leftovers {
    var dropped: [Pending]
    var released: Target?
    var pipeline: MiddlewarePipeline<State>?
    var middlewares: [AnyMiddleware<State>]
    var spare: ProceedTicket?
  }

  @usableFromInline
  let isImmediate: Bool
  @usableFromInline
  var phase = Phase.idle
  @usableFromInline
  var queue = FIFOBuffer<Pending>()
  /// Actions whose interceptor has not decided yet, by the serial of that interception.
  @usableFromInline
  var held: [UInt64: Pending] = [:]
  /// The state (retained once) and the mutations; `nil` once released.
  @usableFromInline
  var target: Target?
  /// The middleware that actions starting from now on run through.
  @usableFromInline
  var pipeline: MiddlewarePipeline<State>?
  /// The store's own middleware, which every pipeline wraps in the shared middleware.
  var middlewares: [AnyMiddleware<State>]
  /// A decided ticket no ``Proceed`` refers to any more, for the next interception.
  @usableFromInline
  var spare: ProceedTicket?
  @usableFromInline
  var lastSerial: UInt64 = 0
  /// The core whose stored property this machine is, for the tickets it makes. `unowned(unsafe)`
  /// is sound: a stored property never outlives the object that stores it.
  @usableFromInline
  unowned(unsafe) var owner: (any ProceedTarget)?

  /// Whether a drain runs (one asked for and not started does not: it has no fast commit to
  /// adopt and owns nothing).
  @inlinable
  var isDrainRunning: Bool {
    switch phase {
    case .draining, .freedWhileDraining: true
    case .idle, .awaitingWorker, .scheduled, .freed: false
    }
  }

  /// Whether the store's ``FastLane`` may be open: the store is idle and alive, on
  /// ``Executor/immediate``, and every stage of its middleware is known to pass through, so an
  /// action needs nothing from this machine but a commit and the hooks around it.
  @inlinable
  var laneMayOpen: Bool {
    guard case .idle = phase, isImmediate else { return false }
    guard let pipeline else { return true }
    return pipeline.firstIntercepting(from: 0) == pipeline.interceptors.count
  }

  /// Whether nothing is under way: no drain runs or is scheduled, no action waits, none is
  /// held by a middleware (or the store is gone).
  var isSettled: Bool {
    switch phase {
    case .idle: queue.count == 0 && held.isEmpty
    case .freed: true
    case .awaitingWorker, .scheduled, .draining, .freedWhileDraining: false
    }
  }

  /// Whether no action waits or commits: no drain runs or is scheduled (or the store is gone).
  /// Actions that a middleware holds may remain.
  var isDrained: Bool {
    switch phase {
    case .idle: queue.count == 0
    case .freed: true
    case .awaitingWorker, .scheduled, .draining, .freedWhileDraining: false
    }
  }

  /// Whether a drain has been asked of the executor and has not started.
  var isAwaitingExecutor: Bool {
    phase == .scheduled
  }

  /// Whether the store is gone.
  @inlinable
  var isStoreFreed: Bool {
    switch phase {
    case .freed, .freedWhileDraining: true
    case .idle, .awaitingWorker, .scheduled, .draining: false
    }
  }

  init(target: Target, middlewares: [AnyMiddleware<State>], isImmediate: Bool) {
    self.target = target
    self.middlewares = middlewares
    self.isImmediate = isImmediate
  }

  // MARK: Events

  /// The store's ``FastLane`` was closed while a fast commit ran: that commit is this
  /// machine's drain now, and its thread goes on draining once it ends.
  @inlinable
  mutating func adoptFastCommit() {
    assert(phase == .idle, "Flux: a fast commit ran while the store's machine was not idle.")
    phase = .draining
  }

  /// An action is dispatched (or a held one resumes). For ``Submission/drainNow``, `handout`
  /// receives what to process.
  ///
  /// Handouts travel through `inout` rather than in a returned value so that the drain holds
  /// the only reference to a ticket during its interception (see ``endInterception(_:_:)``).
  @inlinable
  mutating func dispatch(_ pending: Pending, into handout: inout Handout?) -> Submission {
    switch phase {
    case .freed, .freedWhileDraining:
      return .rejected(pending)
    case .scheduled where isImmediate, .awaitingWorker where isImmediate:
      // The dispatching thread drains, after what waits, rather than wait for the drain asked
      // for: that one finds the machine no longer waiting for it and does nothing.
      queue.append(pending)
      phase = .draining
      handout = handOut(queue.popFirst().unsafelyUnwrapped)
      return .drainNow
    case .awaitingWorker:
      // Asks the executor now rather than wait for the worker, which then does nothing.
      phase = .scheduled
      queue.append(pending)
      return .scheduleDrain
    case .scheduled, .draining:
      queue.append(pending)
      return .queued
    case .idle:
      if isImmediate {
        phase = .draining
        if pipeline == nil && pending.pipeline == nil { return .commitNow(target.unsafelyUnwrapped) }
        handout = handOut(pending)
        return .drainNow
      }
      phase = .scheduled
      queue.append(pending)
      return .scheduleDrain
    }
  }

  /// The drain asks for its next action: `handout` receives it, or stays `nil` when the queue
  /// is empty and the drain ends; the drain then releases what this returns (the state, once
  /// the store is gone).
  @inlinable
  mutating func next(into handout: inout Handout?) -> Target? {
    if let pending = queue.popFirst() {
      handout = handOut(pending)
      return nil
    }
    switch phase {
    case .freedWhileDraining:
      phase = .freed
      return target.take()
    case .draining:
      phase = .idle
      return nil
    case .idle, .awaitingWorker, .scheduled, .freed:
      return nil  // only a drain asks, and a drain runs in the two phases above
    }
  }

  /// The work asked of the executor in ``Submission/scheduleDrain`` runs: whether it is the
  /// drain now. It is not if the store was freed meanwhile, or if a dispatching thread became
  /// the drain in its place (on ``Executor/immediate``, which runs that work inline, so no such
  /// work is left over for a later `scheduled` phase).
  @inlinable
  mutating func startScheduledDrain() -> Bool {
    guard case .scheduled = phase else { return false }
    phase = .draining
    return true
  }

  /// The worker thread asked for in ``Abandonment/drainElsewhere`` runs: whether it must ask
  /// the executor for the drain (`awaitingWorker → scheduled`). It must not if a dispatch asked
  /// already, became the drain, or the store was freed.
  mutating func workerAsksExecutor() -> Bool {
    guard case .awaitingWorker = phase else { return false }
    phase = .scheduled
    return true
  }

  /// Gives a pending action its pipeline if it starts now, and a ticket if an interception is
  /// due. Only called while a drain runs, so `target` is there.
  @inlinable
  mutating func handOut(_ pending: Pending) -> Handout {
    var pending = pending
    if pending.stage == 0 { pending.pipeline = pipeline }
    var ticket: ProceedTicket?
    if let pipeline = pending.pipeline, pending.stage >= 0 {
      pending.stage = pipeline.firstIntercepting(from: pending.stage)
      if pending.stage < pipeline.interceptors.count { ticket = start(spare.take() ?? newTicket()) }
    }
    return Handout(pending: pending, target: target.unsafelyUnwrapped, ticket: ticket)
  }

  /// A new ticket, when no spare is left. Rare: tickets are reused.
  @usableFromInline
  func newTicket() -> ProceedTicket {
    let owner = owner.unsafelyUnwrapped
    return ProceedTicket(target: owner, lock: owner.lock)
  }

  /// Opens the next interception on `ticket`.
  @inlinable
  mutating func start(_ ticket: ProceedTicket) -> ProceedTicket {
    lastSerial &+= 1
    ticket.serial = lastSerial
    ticket.phase = .running
    ticket.decidedByDefaultOf = nil
    return ticket
  }

  /// The interception of `pending` at `pending.stage` through `ticket` has returned.
  ///
  /// `ticket` is the drain's only reference: if no ``Proceed`` copy is left once it is
  /// decided, it is reused. `isKnownUniquelyReferenced` is sound for that because a ticket is
  /// reachable only through ``Proceed`` values, which are structs: nobody can hold a weak or
  /// unowned reference to it, so a count of one strong reference means nobody else at all.
  @inlinable
  ///
  /// `pending` is the drain's action, moved on in place to its next stage. `started`: when the
  /// interception was called, on the clock of ``ActionTrace``, if its pipeline traces actions.
  mutating func endInterception(
    _ ticket: inout ProceedTicket, _ pending: inout Pending, started: UInt64 = 0
  ) -> AfterInterception {
    let reusable = isKnownUniquelyReferenced(&ticket)
    let goesOn: Bool
    switch ticket.phase {
    case .decided(let decision):
      goesOn = decision
    case .running where reusable:
      goesOn = false  // undecided, and nobody kept a copy: nobody can decide any more
    default:
      // Undecided, and a copy is out there. Keep the action for its decision; if the store is
      // gone, nothing waits under this serial, so a later decision is ignored, not refused.
      ticket.phase = .held
      if isStoreFreed { return .dropped }
      let pipeline = pending.pipeline.unsafelyUnwrapped
      if pipeline.tracesActions {
        pending.traced().hold(by: pipeline.middlewareTypes[pending.stage], since: started)
      }
      pending.stage += 1
      held[ticket.serial] = pending
      return .held
    }
    ticket.phase = .done
    if isStoreFreed { return .dropped }
    let pipeline = pending.pipeline.unsafelyUnwrapped
    if goesOn {
      pipeline.learn(stage: pending.stage, decidedByDefaultOf: ticket.decidedByDefaultOf)
      pending.stage = pipeline.firstIntercepting(from: pending.stage + 1)
    } else {
      if pipeline.tracesActions { pending.traced().cancel(by: pipeline.middlewareTypes[pending.stage]) }
      pending.stage = Pending.cancelled
    }
    if goesOn, pending.stage < pipeline.interceptors.count {
      return .intercept(start(reusable ? ticket : newTicket()))
    }
    if reusable { spare = ticket }
    return .finish
  }

  /// A decision arrives through a copy of a ``Proceed`` made for `serial`.
  @usableFromInline
  mutating func decide(
    _ ticket: ProceedTicket, serial: UInt64, goesOn: Bool, into handout: inout Handout?
  ) -> Decision {
    if ticket.recordDuringInterception(serial: serial, goesOn: goesOn) { return .recorded }
    guard ticket.serial == serial else { return .secondDecision }
    switch ticket.phase {
    case .held:
      ticket.phase = .done
      guard var pending = held.removeValue(forKey: serial) else { return .ignored }
      pending.trace?.endHold(goesOn: goesOn)
      if !goesOn { pending.stage = Pending.cancelled }
      return .resume(dispatch(pending, into: &handout))
    case .running, .decided, .done, .idle:
      return .secondDecision
    }
  }

  /// The last copy of an undecided, held ``Proceed`` is gone: nobody can decide any more.
  @usableFromInline
  mutating func abandon(serial: UInt64) -> Abandonment {
    guard var pending = held.removeValue(forKey: serial) else { return .done }
    pending.trace?.endHold(goesOn: false)
    pending.stage = Pending.cancelled
    queue.append(pending)
    switch phase {
    case .idle:
      // The action stays in the machine, so the store is not settled until its cancel hooks ran.
      phase = .awaitingWorker
      return .drainElsewhere
    case .awaitingWorker, .scheduled, .draining:
      return .done  // the drain that runs, or will, takes it
    case .freed, .freedWhileDraining:
      fatalError("Flux: a freed store held an action.")  // `storeFreed` emptied `held`
    }
  }

  /// The store is freed: drop what waits, refuse what comes, release what nothing runs with.
  @usableFromInline
  mutating func storeFreed() -> Leftovers {
    var leftovers = Leftovers(
      dropped: queue.removeAll() + held.values, released: nil, pipeline: pipeline.take(), middlewares: middlewares,
      spare: spare.take())
    held = [:]
    middlewares = []
    switch phase {
    case .idle, .awaitingWorker, .scheduled:
      // No drain runs: the state and the mutations go now. A scheduled drain finds `freed`.
      phase = .freed
      leftovers.released = target.take()
    case .draining:
      phase = .freedWhileDraining
    case .freed, .freedWhileDraining:
      break
    }
    return leftovers
  }

  /// The shared middleware changed: actions that start from now on use the store's own
  /// middleware wrapped in `shared`. Returns the pipeline to release after the lock.
  mutating func replaceShared(with shared: [any SharedMiddleware]) -> MiddlewarePipeline<State>? {
    if isStoreFreed { return nil }
    defer { pipeline = MiddlewarePipeline.make(own: middlewares, shared: shared) }
    return pipeline
  }
}
