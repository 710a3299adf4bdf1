/// The engine of a ``Store``: its state, its mutations, its middleware and the queue of
/// actions waiting for their commit.
///
/// One drain at a time walks the queue, so commits (and middleware hooks) never overlap and
/// keep dispatch order on any executor. On ``Executor/immediate`` the dispatching thread drains
/// at once; on any other executor one drain is scheduled and runs until the queue is empty. An
/// action dispatched while a drain runs (from a mutation, say) joins the queue and is committed
/// by that drain after the current commit. The lock is never held while user code runs.
@usableFromInline
final class StoreCore<State: FluxCore.State>: ProceedTarget, @unchecked Sendable {
  /// An action on its way: where it stands in the middleware, and who waits for it.
  @usableFromInline
  struct Pending {
    @usableFromInline
    var action: State.Action
    /// The next interceptor to run, or `cancelled` when only the cancel hooks remain.
    @usableFromInline
    var stage: Int
    @usableFromInline
    var completion: (@Sendable (Bool) -> Void)?

    @inlinable
    init(action: State.Action, stage: Int, completion: (@Sendable (Bool) -> Void)?) {
      self.action = action
      self.stage = stage
      self.completion = completion
    }

    @usableFromInline
    static var cancelled: Int { -1 }
  }

  /// What commits run against. The state is lent to the commit without a retain: the core
  /// owns it, and never releases it while a drain runs.
  @usableFromInline
  typealias Target = (state: Unmanaged<State>, mutations: State.Mutations)

  @usableFromInline
  enum Decision {
    case proceed, cancel, pending
  }

  @usableFromInline
  let executor: Executor
  @usableFromInline
  let isImmediate: Bool
  private let ownMiddlewares: [AnyMiddleware<State>]

  @usableFromInline
  let lock = Lock()
  // Everything below is guarded by `lock`; `@exclusivity(unchecked)` because the lock already
  // serializes every access.
  @usableFromInline @exclusivity(unchecked)
  var queue = FIFOBuffer<Pending>()
  /// A drain is running or scheduled on the executor.
  @usableFromInline @exclusivity(unchecked)
  var isDraining = false
  /// The store is gone: nothing more is committed.
  @usableFromInline @exclusivity(unchecked)
  var isCancelled = false
  /// The state, retained once, and the mutations. Released when the store is gone and no
  /// drain runs (else by that drain as it ends), so that neither an ``Actions`` kept by someone
  /// nor a registry snapshot keeps them alive.
  @usableFromInline @exclusivity(unchecked)
  var ownedState: Unmanaged<State>?
  @usableFromInline @exclusivity(unchecked)
  var mutations: State.Mutations?
  @usableFromInline @exclusivity(unchecked)
  var pipeline: MiddlewarePipeline<State>?
  @usableFromInline @exclusivity(unchecked)
  var nextSerial: UInt64 = 1
  /// Actions whose interceptor has not decided yet, by serial.
  private var delayed: [UInt64: Pending] = [:]
  /// A decided ``Proceed`` nobody else holds, for the next interception.
  @usableFromInline @exclusivity(unchecked)
  var spareProceed: Proceed?

  init(state: State, mutations: State.Mutations, executor: Executor, middlewares: [AnyMiddleware<State>]) {
    self.ownedState = Unmanaged.passRetained(state)
    self.mutations = mutations
    self.executor = executor
    self.isImmediate = executor.isImmediate
    self.ownMiddlewares = middlewares
  }

  // MARK: Dispatch and drain

  /// Queues `action` for its commit, and starts a drain if none runs. `completion` learns
  /// whether it was committed (`false`: cancelled by middleware, or the store is gone).
  @inlinable
  func dispatch(_ action: State.Action, completion: (@Sendable (Bool) -> Void)? = nil) {
    lock.lock()
    submitLocked(Pending(action: action, stage: 0, completion: completion))
  }

  /// Queues `pending` or drains it at once. Called with `lock` held; returns with it released.
  @inlinable
  func submitLocked(_ pending: Pending) {
    if isCancelled {
      lock.unlock()
      pending.completion?(false)
      return
    }
    if isDraining {
      queue.append(pending)
      lock.unlock()
      return
    }
    isDraining = true
    if isImmediate {
      let pipeline = self.pipeline
      let target = (ownedState.unsafelyUnwrapped, mutations.unsafelyUnwrapped)
      lock.unlock()
      process(pending, pipeline, target)
      drain()
    } else {
      queue.append(pending)
      lock.unlock()
      scheduleDrain()
    }
  }

  /// Asks the executor for a drain; the work holds the core weakly, so it never keeps a store
  /// alive.
  @usableFromInline
  func scheduleDrain() {
    executor.execute { [weak self] in self?.drain() }
  }

  /// Processes queued actions one by one until the queue is empty or the store is gone.
  @inlinable
  func drain() {
    while true {
      lock.lock()
      // A cancel empties the queue, so a popped action always has its state.
      guard let pending = queue.popFirst() else {
        isDraining = false
        let released = isCancelled ? takeTarget() : nil
        lock.unlock()
        released?.state.release()
        return
      }
      let pipeline = self.pipeline
      let target = (ownedState.unsafelyUnwrapped, mutations.unsafelyUnwrapped)
      lock.unlock()
      process(pending, pipeline, target)
    }
  }

  /// Runs `pending` through the middleware and commits it.
  @inlinable
  func process(_ pending: Pending, _ pipeline: MiddlewarePipeline<State>?, _ target: Target) {
    guard let pipeline else {
      target.state._withUnsafeGuaranteedRef { target.mutations.commit(action: pending.action, state: $0) }
      pending.completion?(true)
      return
    }
    processSlow(pending, pipeline, target)
  }

  @inlinable
  func processSlow(_ pending: Pending, _ pipeline: MiddlewarePipeline<State>, _ target: Target) {
    target.state._withUnsafeGuaranteedRef { state in
      runMiddleware(pending, pipeline, state, target.mutations)
    }
  }

  @inlinable
  func runMiddleware(
    _ pending: Pending,
    _ pipeline: MiddlewarePipeline<State>,
    _ state: State,
    _ mutations: State.Mutations
  ) {
    var pending = pending
    while pending.stage >= 0, pending.stage < pipeline.interceptors.count {
      switch intercept(pending, pipeline, state) {
      case .proceed: pending.stage += 1
      case .cancel: pending.stage = Pending.cancelled
      case .pending: return
      }
    }
    if pending.stage == Pending.cancelled {
      pipeline.didCancel(pending.action, state)
      pending.completion?(false)
      return
    }
    pipeline.willCommit(pending.action, state)
    mutations.commit(action: pending.action, state: state)
    pipeline.didCommit(pending.action, state)
    pending.completion?(true)
  }

  // MARK: Interception

  /// Runs one interception; the decision made during the call, if any, reuses the ``Proceed``.
  @inlinable
  func intercept(_ pending: Pending, _ pipeline: MiddlewarePipeline<State>, _ state: State) -> Decision {
    lock.lock()
    let serial = nextSerial
    nextSerial &+= 1
    var proceed = spareProceed.take() ?? makeProceed()
    proceed.serial = serial
    proceed.isRunning = true
    proceed.decision = nil
    lock.unlock()

    pipeline.intercept(at: pending.stage, pending.action, state, proceed)

    lock.lock()
    let decided = proceed.decision
    proceed.isRunning = false
    if let decided {
      if isKnownUniquelyReferenced(&proceed) { spareProceed = proceed }
      lock.unlock()
      return decided ? .proceed : .cancel
    }
    lock.unlock()
    return park(pending, serial: serial, &proceed)
  }

  @usableFromInline
  func makeProceed() -> Proceed {
    Proceed(target: self, lock: lock)
  }

  /// Keeps an action whose interceptor did not decide during its call, until it decides. If
  /// nobody kept the ``Proceed``, nobody can decide: the action is cancelled.
  @usableFromInline
  func park(_ pending: Pending, serial: UInt64, _ proceed: inout Proceed) -> Decision {
    var waiting = pending
    waiting.stage += 1
    lock.withLock { delayed[serial] = waiting }
    if isKnownUniquelyReferenced(&proceed), lock.withLock({ delayed.removeValue(forKey: serial) }) != nil {
      return .cancel
    }
    return .pending
  }

  @usableFromInline
  /// A decision made after the interception returned (one made during it stays in the
  /// ``Proceed``).
  func resolve(_ proceed: Proceed, proceed goesOn: Bool) {
    lock.lock()
    if isCancelled {
      lock.unlock()
      return
    }
    guard var pending = delayed.removeValue(forKey: proceed.serial) else {
      lock.unlock()
      preconditionFailure(
        "Flux: a middleware decided the same action twice (proceed() or cancel() called again). "
          + "Decide each action exactly once.")
    }
    if !goesOn { pending.stage = Pending.cancelled }
    submitLocked(pending)
  }

  @usableFromInline
  func abandon(_ proceed: Proceed) {
    lock.lock()
    guard !isCancelled, var pending = delayed.removeValue(forKey: proceed.serial) else {
      lock.unlock()
      return
    }
    pending.stage = Pending.cancelled
    submitLocked(pending)
  }

  // MARK: Lifecycle

  /// Rebuilds the middleware pipeline around a new list of shared middleware.
  func setShared(_ shared: [any SharedMiddleware]) {
    let pipeline = MiddlewarePipeline.make(own: ownMiddlewares, shared: shared)
    lock.withLock { self.pipeline = pipeline }
  }

  /// Drops every queued and delayed action and refuses later ones: the store has been freed.
  /// Whoever waits for a dropped action learns that it was not committed.
  func cancel() {
    lock.lock()
    isCancelled = true
    let released = isDraining ? nil : takeTarget()
    let dropped = queue.removeAll() + delayed.values
    delayed = [:]
    let spare = spareProceed.take()
    lock.unlock()
    for pending in dropped { pending.completion?(false) }
    released?.state.release()
    _ = spare  // released here, after the lock
  }

  /// Takes the state and mutations out, for release after the lock. Called with `lock` held.
  @usableFromInline
  func takeTarget() -> Target? {
    guard let state = ownedState.take(), let mutations = mutations.take() else { return nil }
    return (state, mutations)
  }

  deinit {
    ownedState?.release()
  }
}
