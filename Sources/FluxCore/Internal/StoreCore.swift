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
@usableFromInline
final class StoreCore<State: FluxCore.State>: ProceedTarget, @unchecked Sendable {
  @usableFromInline
  typealias Machine = StoreStateMachine<State>
  @usableFromInline
  typealias Pending = Machine.Pending

  @usableFromInline
  let executor: Executor

  @usableFromInline
  let lock = Lock()
  /// Guarded by `lock`; `@exclusivity(unchecked)` because the lock already serializes every
  /// access, and the dynamic check would cost a runtime call per dispatch.
  @usableFromInline @exclusivity(unchecked)
  var machine: Machine

  init(state: State, mutations: State.Mutations, executor: Executor, middlewares: [AnyMiddleware<State>]) {
    self.machine = Machine(
      target: (Unmanaged.passRetained(state), mutations), middlewares: middlewares, isImmediate: executor.isImmediate)
    self.executor = executor
    machine.owner = self
  }

  deinit {
    // The store's `cancel()` releases the state; this covers a core whose store never ran it.
    machine.target?.state.release()
  }

  // MARK: Dispatch and drain

  /// Queues `action` for its commit, and starts a drain if none runs. `completion` learns
  /// whether it was committed (`false`: cancelled by middleware, or the store is gone).
  @inlinable
  func dispatch(_ action: State.Action, completion: (@Sendable (Bool) -> Void)? = nil) {
    submit(Pending(action: action, completion: completion))
  }

  @inlinable
  func submit(_ pending: Pending) {
    var handout: Machine.Handout?
    lock.lock()
    let submission = machine.dispatch(pending, into: &handout)
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
    executor.execute { [weak self] in self?.drain() }
  }

  /// Processes queued actions one by one until the queue is empty.
  @inlinable
  func drain() {
    var handout: Machine.Handout?
    while true {
      lock.lock()
      let released = machine.next(into: &handout)
      lock.unlock()
      guard handout != nil else {
        released?.state.release()
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
        pipeline.intercept(
          at: handout.pending.stage, handout.pending.action, state, Proceed(ticket: ticket, serial: ticket.serial))
        lock.lock()
        let after = machine.endInterception(&ticket, &handout.pending)
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
        pipeline.didCancel(action, state)
        handout.pending.completion?(false)
        return
      }
      pipeline.willCommit(action, state)
      target.mutations.commit(action: action, state: state)
      pipeline.didCommit(action, state)
      handout.pending.completion?(true)
    }
  }

  // MARK: Decisions

  @usableFromInline
  func decide(_ ticket: ProceedTicket, serial: UInt64, goesOn: Bool) {
    var handout: Machine.Handout?
    lock.lock()
    let decision = machine.decide(ticket, serial: serial, goesOn: goesOn, into: &handout)
    lock.unlock()
    switch decision {
    case .recorded, .ignored:
      return
    case .resume(let submission):
      perform(submission, &handout)
    case .secondDecision:
      preconditionFailure(
        "Flux: a middleware decided the same action twice (proceed() or cancel() called again). "
          + "Decide each action exactly once.")
    }
  }

  @usableFromInline
  func abandon(serial: UInt64) {
    lock.lock()
    let abandonment = machine.abandon(serial: serial)
    lock.unlock()
    guard case .submitLater(let pending) = abandonment else { return }
    // Whoever released the last copy may hold locks of their own that the cancel hooks take:
    // the cancellation starts from a worker thread instead, on the store's executor.
    DispatchQueue.global().async { self.submit(pending) }
  }

  // MARK: Lifecycle

  /// Rebuilds the middleware pipeline around a new list of shared middleware. Returns the old
  /// pipeline, for the caller to release once it holds no lock.
  func setShared(_ shared: [any SharedMiddleware]) -> MiddlewarePipeline<State>? {
    lock.withLock { machine.replaceShared(with: shared) }
  }

  /// Drops every queued and held action and refuses later ones: the store has been freed.
  /// Whoever waits for a dropped action learns that it was not committed.
  func cancel() {
    lock.lock()
    let leftovers = machine.storeFreed()
    lock.unlock()
    for pending in leftovers.dropped { pending.completion?(false) }
    leftovers.released?.state.release()
    withExtendedLifetime(leftovers) {}
  }
}
