import Dispatch

/// The engine of a ``Store``: the lock around its ``StoreStateMachine``, and the code that
/// does what each transition returns.
///
/// One drain at a time walks the queue, so commits (and middleware hooks) never overlap and
/// keep dispatch order on any executor. On ``Executor/immediate`` the dispatching thread drains
/// at once; on any other executor one drain is scheduled and runs until the queue is empty. An
/// action dispatched while a drain runs (from a mutation, say) joins the queue and is committed
/// by that drain after the current commit.
///
/// The lock is held only around the machine's transitions. Everything that can run user code
/// (commits, hooks, completions) or release a user object (actions, pipelines, the state)
/// happens after it is released.
///
/// An idle store on `.immediate` whose middleware all keeps the default interception is
/// dispatched to through its ``FastLane`` instead, without the lock; every locked section
/// closes the lane first (``lockMachine()``) and settles it last (``unlockMachine()``).
// `@unchecked Sendable`: `machine` is guarded by `lock`; `lanePipeline` is written only under
// `lock` while the lane is not open and read only by the lane's claimant (see ``FastLane``);
// the lane is atomic and everything else is constant.
@usableFromInline
final class StoreCore<State: FluxCore.State>: ProceedTarget, @unchecked Sendable {
  @usableFromInline
  typealias Machine = StoreStateMachine<State>
  @usableFromInline
  typealias Pending = Machine.Pending

  // The lane's fields come first, in the object's first cache line: a global dispatch to many
  // stores touches nothing else of each core.

  /// The dispatching thread's way past `lock`; see ``FastLane``.
  @usableFromInline
  let lane = FastLane()
  /// Whether one of the store's own middleware asked for an ``ActionTrace`` of each action;
  /// read by a global dispatch, beside the lane.
  @usableFromInline
  let tracesActions: Bool
  /// Whether one of the store's own middleware keeps it apart from global dispatch and shared
  /// middleware (``AnyMiddleware/keepingStoreApart()``).
  let isApart: Bool
  /// What fast commits run against: the machine's target. The state is the machine's to
  /// release, which it does only once no drain runs, so never during a fast commit. Written
  /// like `lanePipeline`: dropped, with the mutations it holds, once the store is freed and the
  /// lane shut for good (``settleLane()``), so that mutations holding the store's `actions`
  /// make no cycle with the core.
  @usableFromInline @exclusivity(unchecked)
  var laneTarget: Machine.Target?
  /// The middleware of fast commits (all of it passing through): the machine's pipeline when
  /// the lane last opened, retained. Written only with `lock` held while no drain runs and the
  /// lane is not open (``settleLane()``: the machine idle, or freed, or waiting for a drain it
  /// has asked for), so while no fast commit runs; read by fast commits, which run only while
  /// the lane is claimed. `@exclusivity(unchecked)`: that protocol serializes it.
  @usableFromInline @exclusivity(unchecked)
  var lanePipeline: Unmanaged<MiddlewarePipeline<State>>?

  /// Where drains run; guarded by `lock`. Dropped when the store is freed, so that an executor
  /// whose context holds the store's `actions` makes no cycle with the core.
  @usableFromInline @exclusivity(unchecked)
  var executor: Executor?

  @usableFromInline
  let lock = Lock()
  /// Guarded by `lock`; `@exclusivity(unchecked)` because the lock already serializes every
  /// access, and the dynamic check would cost a runtime call per dispatch.
  @usableFromInline @exclusivity(unchecked)
  var machine: Machine

  init(state: State, mutations: State.Mutations, executor: Executor, middlewares: [AnyMiddleware<State>]) {
    let target = (Unmanaged.passRetained(state), mutations)
    self.machine = Machine(target: target, middlewares: middlewares, isImmediate: executor.isImmediate)
    self.laneTarget = target
    self.executor = executor
    self.tracesActions = middlewares.contains { $0.tracesActions }
    self.isApart = middlewares.contains { $0.keepsStoreApart }
    machine.owner = self
    // The lane stays closed until the store's registration builds its pipeline (`setShared`).
  }

  deinit {
    // The store's `cancel()` releases the state; this covers a core whose store never ran it.
    machine.target?.state.release()
    lanePipeline?.release()
  }

  // MARK: The lock and the lane

  /// Takes the lock, and closes the lane, so that the machine is the whole truth: a fast
  /// commit running now becomes the machine's drain.
  @inlinable
  func lockMachine() {
    lock.lock()
    if case .handedOver = lane.close() { machine.adoptFastCommit() }
  }

  /// Opens the lane if the machine allows it now (or keeps it shut), and releases the lock.
  /// Returns the pipeline the lane no longer uses, for the caller to release after the lock.
  @inlinable
  func unlockMachine() -> Retired {
    let retired = machine.isDrainRunning ? Retired() : settleLane()
    lock.unlock()
    return retired
  }

  /// What the lane let go of, for the caller to release once it holds no lock: a middleware
  /// pipeline, and (once the store is freed) the target with the user's mutations.
  @usableFromInline
  struct Retired {
    @usableFromInline
    var pipeline: MiddlewarePipeline<State>?
    @usableFromInline
    var target: Machine.Target?

    @inlinable
    init(pipeline: MiddlewarePipeline<State>? = nil, target: Machine.Target? = nil) {
      self.pipeline = pipeline
      self.target = target
    }

    /// The same, as objects that the caller can keep with others.
    var objects: [AnyObject] {
      var objects: [AnyObject] = []
      if let pipeline { objects.append(pipeline) }
      if let target { objects.append(Leftover(target)) }
      return objects
    }
  }

  /// With `lock` held and no drain running (so no fast commit either): opens the lane with the
  /// machine's pipeline if the machine allows it, or shuts it. Returns what it dropped.
  @usableFromInline
  func settleLane() -> Retired {
    let old = lanePipeline
    guard machine.laneMayOpen else {
      lane.shut()
      lanePipeline = nil
      // A freed store's lane never opens again: nothing reads the target any more.
      let target = machine.isStoreFreed ? laneTarget.take() : nil
      return Retired(pipeline: old?.takeRetainedValue(), target: target)
    }
    let current = machine.pipeline.map(Unmanaged.passUnretained)
    let replaced = old?.toOpaque() != current?.toOpaque()
    if replaced { lanePipeline = current?.retain() }
    lane.open()  // after the write above, which its release ordering publishes to claimants
    return Retired(pipeline: replaced ? old?.takeRetainedValue() : nil)
  }

  /// Commits `pending` as the lane's claimant: the hooks of the lane's pipeline around the
  /// commit, then the completion. Nothing here is retained: the lane's claim keeps the state
  /// and the pipeline where they are (see `laneTarget` and `lanePipeline`).
  @inlinable
  func commitFast(_ pending: Pending) {
    // Set: the lane opens only for a store not freed, and the target goes only once it is shut.
    guard let target = laneTarget else { fatalError("Flux: a fast commit found no target.") }
    guard let pipeline = lanePipeline else { return commit(pending, target) }
    pipeline._withUnsafeGuaranteedRef { pipeline in
      target.state._withUnsafeGuaranteedRef { state in
        pipeline.willCommit(pending.action, state)
        target.mutations.commit(action: pending.action, state: state)
        // Tested, not bound: a store that does not trace retains and releases nothing here.
        if _slowPath(pending.trace != nil) {
          ActionTrace.during(pending.trace.unsafelyUnwrapped, of: ObjectIdentifier(state)) {
            pipeline.didCommit(pending.action, state)
          }
        } else {
          pipeline.didCommit(pending.action, state)
        }
      }
    }
    pending.completion?(true)
  }

  // MARK: Dispatch and drain

  /// Queues `action` for its commit, and starts a drain if none runs. `completion` learns
  /// whether it was committed (`false`: cancelled by middleware, or the store is gone).
  ///
  /// A new action takes the lane when it is open. Only a new one: an action resubmitted after
  /// an interception (a cancellation left by an abandoned ``Proceed``) has a pipeline and a
  /// stage of its own, which only the machine follows.
  ///
  /// `trace`: the action's ``ActionTrace``, from a global dispatch to a store that traces.
  @inlinable
  func dispatch(
    _ action: State.Action, completion: (@Sendable (Bool) -> Void)? = nil, trace: ActionTrace? = nil
  ) {
    let pending = Pending(action: action, completion: completion, trace: trace)
    if lane.claim() {
      commitFast(pending)
      if lane.finish() { return }
      // Handed over meanwhile: whatever was dispatched during the commit waits for this drain.
      return drain()
    }
    submit(pending)
  }

  /// Dispatches `action` as one store of the global dispatch that `dispatch` numbers: a store
  /// that traces its actions records that number, taking the next one if it is still `0`; any
  /// other store dispatches as ``dispatch(_:completion:trace:)``, and pays one check.
  @inlinable
  func dispatch(
    globally action: State.Action, number dispatch: inout UInt64, completion: (@Sendable (Bool) -> Void)? = nil
  ) {
    guard tracesActions else { return self.dispatch(action, completion: completion) }
    dispatchTraced(action, number: &dispatch, completion: completion)
  }

  /// ``dispatch(globally:number:completion:)`` for a store that traces its actions.
  @usableFromInline
  func dispatchTraced(
    _ action: State.Action, number dispatch: inout UInt64, completion: (@Sendable (Bool) -> Void)?
  ) {
    if dispatch == 0 { dispatch = ActionTrace.nextDispatch() }
    self.dispatch(action, completion: completion, trace: ActionTrace(dispatch: dispatch))
  }

  /// Hands `pending` to the machine, under the lock.
  @inlinable
  func submit(_ pending: Pending) {
    var handout: Machine.Handout?
    lockMachine()
    let submission = machine.dispatch(pending, into: &handout)
    // An idle machine became draining, or stayed as it was: nothing for the lane to settle.
    lock.unlock()
    guard case .commitNow(let target) = submission else { return perform(submission, &handout) }
    commit(pending, target)
    drain()
  }

  /// Commits `pending` for a store without middleware; completion learns `true`.
  @inlinable
  func commit(_ pending: Pending, _ target: Machine.Target) {
    // The state is owned by the machine, which keeps it while a drain runs.
    target.state._withUnsafeGuaranteedRef { target.mutations.commit(action: pending.action, state: $0) }
    pending.completion?(true)
  }

  /// Does what a submission asks. Called without the lock.
  @inlinable
  func perform(_ submission: Machine.Submission, _ handout: inout Machine.Handout?) {
    switch submission {
    case .queued:
      return
    case .drainNow:
      process(&handout!)
      handout = nil
      drain()
    case .scheduleDrain:
      scheduleDrain()
    case .rejected(let pending):
      pending.completion?(false)
    case .commitNow:
      // Only for an action without a pipeline, which `submit(_:)` handles itself: an action
      // resumed by a decision was intercepted, so it has one.
      assertionFailure("Flux: a resumed action had no pipeline.")
    }
  }

  /// Asks the executor for a drain; the work holds the core weakly, so it never keeps a store
  /// alive.
  ///
  /// `@inlinable`, so that the drain the executor runs is the caller's specialization: compiled
  /// generically, every action it commits looks up generic metadata (about two thirds of a
  /// `.queue` store's time per action).
  @inlinable
  func scheduleDrain() {
    lock.lock()
    let executor = self.executor
    lock.unlock()
    // No executor: the store was freed meanwhile, and let go of everything then.
    guard let executor else { return }
    executor.execute { [weak self] in self?.drain(asScheduled: true) }
  }

  /// Processes queued actions one by one until the queue is empty. `asScheduled`: the work
  /// that ``scheduleDrain()`` asked for, which drains only if the machine still waits for it.
  @inlinable
  func drain(asScheduled: Bool = false) {
    var handout: Machine.Handout?
    var starting = asScheduled
    while true {
      lockMachine()
      if starting {
        starting = false
        guard machine.startScheduledDrain() else {
          withExtendedLifetime(unlockMachine()) {}
          return
        }
      }
      let released = machine.next(into: &handout)
      let retired = unlockMachine()
      guard handout != nil else {
        released?.state.release()
        withExtendedLifetime(retired) {}
        return
      }
      process(&handout!)
      handout = nil
    }
  }

  /// Runs one handed-out action through its middleware and commits it. Takes the ticket out
  /// of `handout`, so that the interception holds the drain's only reference to it, and moves
  /// the action on in place.
  @inlinable
  func process(_ handout: inout Machine.Handout) {
    let target = handout.target
    guard handout.pending.pipeline != nil else { return commit(handout.pending, target) }
    var next = handout.ticket.take()
    target.state._withUnsafeGuaranteedRef { state in
      // Held by `handout.pending` throughout.
      let pipeline = handout.pending.pipeline.unsafelyUnwrapped
      while var ticket = next.take() {
        let started = pipeline.tracesActions ? ActionTrace.now() : 0
        pipeline.intercept(
          at: handout.pending.stage, handout.pending.action, state, Proceed(ticket: ticket, serial: ticket.serial))
        // A drain runs, so the lane is closed (or handed over to it): no need to close it.
        lock.lock()
        let after = machine.endInterception(&ticket, &handout.pending, started: started)
        lock.unlock()
        // The drain's reference goes only after the lock: the ticket's deinit may come back in.
        withExtendedLifetime(ticket) {}
        switch after {
        case .intercept(let nextTicket):
          next = nextTicket
        case .finish:
          break
        case .held:
          return
        case .dropped:
          handout.pending.completion?(false)
          return
        }
      }
      let action = handout.pending.action
      if handout.pending.stage == Pending.cancelled {
        if _slowPath(handout.pending.trace != nil) {
          ActionTrace.during(handout.pending.trace.unsafelyUnwrapped, of: ObjectIdentifier(state)) {
            pipeline.didCancel(action, state)
          }
        } else {
          pipeline.didCancel(action, state)
        }
        handout.pending.completion?(false)
        return
      }
      pipeline.willCommit(action, state)
      target.mutations.commit(action: action, state: state)
      if _slowPath(handout.pending.trace != nil) {
        ActionTrace.during(handout.pending.trace.unsafelyUnwrapped, of: ObjectIdentifier(state)) {
          pipeline.didCommit(action, state)
        }
      } else {
        pipeline.didCommit(action, state)
      }
      handout.pending.completion?(true)
    }
  }

  // MARK: Decisions

  @usableFromInline
  func decide(_ ticket: ProceedTicket, serial: UInt64, goesOn: Bool) {
    var handout: Machine.Handout?
    lockMachine()
    let decision = machine.decide(ticket, serial: serial, goesOn: goesOn, into: &handout)
    let retired = unlockMachine()
    withExtendedLifetime(retired) {}
    switch decision {
    case .recorded, .ignored:
      return
    case .resume(let submission):
      perform(submission, &handout)
    case .secondDecision:
      // `fatalError`, like every stop of the package: an optimized build drops the message of
      // a `precondition` or `preconditionFailure`, and a misuse must be named in every build.
      fatalError(
        "Flux: a middleware decided the same action twice (proceed() or cancel() called again). "
          + "Decide each action exactly once.")
    }
  }

  @usableFromInline
  func abandon(serial: UInt64) {
    lockMachine()
    let abandonment = machine.abandon(serial: serial)
    let retired = unlockMachine()
    withExtendedLifetime(retired) {}
    guard case .drainElsewhere = abandonment else { return }
    // Whoever released the last copy may hold locks of their own that the cancel hooks take,
    // and the executor may run work inline: a worker thread asks it instead, unless a dispatch
    // did meanwhile. Held weakly: if the store goes first, it drops the cancellation and its
    // waiter learns `false`.
    DispatchQueue.global().async { [weak self] in
      guard let self else { return }
      lockMachine()
      let asks = machine.workerAsksExecutor()
      withExtendedLifetime(unlockMachine()) {}
      if asks { scheduleDrain() }
    }
  }

  // MARK: Lifecycle

  /// Rebuilds the middleware pipeline around a new list of shared middleware. Returns the
  /// pipelines it replaced (the machine's, the lane's), for the caller to release once it holds
  /// no lock.
  func setShared(_ shared: [any SharedMiddleware]) -> [AnyObject] {
    lockMachine()
    let replaced = machine.replaceShared(with: shared)
    let retired = unlockMachine()
    return [replaced].compactMap { $0 } + retired.objects
  }

  /// Whether nothing is under way in the store: a commit running on the lane counts as under
  /// way (closing the lane makes it the machine's drain).
  var isSettled: Bool {
    readMachine(\.isSettled)
  }

  /// Whether no action waits or commits in the store; a commit running on the lane commits.
  var isDrained: Bool {
    readMachine(\.isDrained)
  }

  /// Whether a drain has been asked of the executor and has not started.
  var isAwaitingExecutor: Bool {
    readMachine(\.isAwaitingExecutor)
  }

  /// Whether the store of this core has been freed (and so refuses every action).
  var isStoreFreed: Bool {
    readMachine(\.isStoreFreed)
  }

  /// Reads the machine under the lock; what the lane let go of meanwhile goes after it.
  private func readMachine<Value>(_ read: (Machine) -> Value) -> Value {
    lockMachine()
    let value = read(machine)
    let retired = unlockMachine()
    withExtendedLifetime(retired) {}
    return value
  }

  /// Drops every queued and held action and refuses later ones: the store has been freed.
  /// Whoever waits for a dropped action learns that it was not committed.
  func cancel() {
    lockMachine()
    let leftovers = machine.storeFreed()
    let executor = self.executor.take()
    let retired = unlockMachine()
    for pending in leftovers.dropped { pending.completion?(false) }
    leftovers.released?.state.release()
    withExtendedLifetime((leftovers, retired, executor)) {}
  }
}

/// A value let go of under a lock, kept as an object until the caller holds none.
final class Leftover<Value> {
  let value: Value

  init(_ value: Value) {
    self.value = value
  }
}
