import Dispatch

extension Actions {
  /// Dispatches `action` and waits until it has been committed, or cancelled.
  ///
  /// ```swift
  /// let committed = await store.actions.dispatchAndWait(action: .increment)
  /// // The commit has run; observers triggered by it have run too.
  /// ```
  ///
  /// Works on every executor. The action is dispatched from the caller's isolation (the main
  /// actor, say), as `dispatch(action:)` called there would be: a store on
  /// ``Executor/immediate`` commits it there. Awaiting on the main actor for a store on
  /// ``Executor/mainThread`` does not deadlock: the task suspends and frees the main queue for
  /// the commit (or the commit runs inline, before the first suspension, when nothing else is
  /// pending there). On an executor whose work waits until someone runs it (FluxTesting's
  /// `ManualExecutor`), the awaiting task runs it, in the caller's isolation, first submitted
  /// first, until the action has ended: nothing else would.
  ///
  /// > Important: The action is committed on the store's executor, like any other; only the
  /// > waiting task resumes elsewhere. Cancelling the waiting task does not cancel the action.
  ///
  /// - Parameters:
  ///   - action: The action to commit.
  ///   - isolation: Where the action is dispatched from: the caller's, by default.
  /// - Returns: `true` once the action was committed (for ``Store/actions-swift.type.property``:
  ///   by every store that received it); `false` if a middleware cancelled it or the store is
  ///   gone.
  @discardableResult
  public func dispatchAndWait(
    action: State.Action, isolation: isolated (any Actor)? = #isolation
  ) async -> Bool {
    // A store whose work waits until someone runs it (the test kit's manual executor) would
    // wait for ever: this task runs that work. One store's executor is known before the
    // dispatch; the stores a global dispatch reaches, only after it.
    if let core, let work = core.waitingWork {
      return await dispatchRunning(action, isolation: isolation) { [work] }
    }
    if let registry {
      return await dispatchRunning(action, isolation: isolation) { registry.takeUnretainedValue().waitingWorks }
    }
    return await withCheckedContinuation(isolation: isolation) { continuation in
      dispatch(action: action) { continuation.resume(returning: $0) }
    }
  }

  /// Dispatches `action` from no isolation and waits until it has been committed, or cancelled:
  /// the spelling of ``dispatchAndWait(action:isolation:)`` as a function of one argument.
  ///
  /// ```swift
  /// let wait: (CounterState.Action) async -> Bool = store.actions.dispatchAndWait
  /// ```
  ///
  /// A call written in full, `dispatchAndWait(action: x)`, takes
  /// ``dispatchAndWait(action:isolation:)``, which dispatches from the caller's isolation. This one
  /// is what a function value of type `(Action) async -> Bool`, the reference
  /// `dispatchAndWait(action:)`, or a protocol requirement of that shape finds: it has no
  /// caller's isolation to dispatch from, so a store on ``Executor/immediate`` commits on the
  /// thread that runs it, as one dispatched from a task of no actor would.
  ///
  /// - Parameter action: The action to commit.
  /// - Returns: `true` once the action was committed; `false` if a middleware cancelled it or
  ///   the store is gone.
  @_disfavoredOverload
  @discardableResult
  public func dispatchAndWait(action: State.Action) async -> Bool {
    await dispatchAndWait(action: action, isolation: nil)
  }

  /// Dispatches `action`, then runs, in the caller's isolation, the work that waits in what
  /// `works` finds once the action is dispatched, until the action has ended; just waits when
  /// it finds none.
  private func dispatchRunning(
    _ action: State.Action, isolation: isolated (any Actor)?, works: () -> [any WaitingWork]
  ) async -> Bool {
    let outcome = AwaitedOutcome()
    dispatch(action: action) { outcome.resolve($0) }
    let works = works()
    guard !works.isEmpty else { return await outcome.value(isolation: isolation) }
    while true {
      var ran = false
      for work in works {
        while outcome.result == nil, work.runNext() { ran = true }
      }
      if let result = outcome.result { return result }
      // Nothing waits to run, and the action is under way: held by a middleware, or its
      // cancellation about to be asked for by a worker thread. Both submit work when they end.
      if !ran { await outcome.pause(isolation: isolation) }
    }
  }
}

extension StoreCore {
  /// Where the store's executor keeps its work until someone runs it, if it does; `nil` once the
  /// store is freed.
  var waitingWork: (any WaitingWork)? {
    lock.lock()
    let executor = self.executor
    lock.unlock()
    return executor?.waitingWork
  }
}

extension StoreRegistry {
  /// Where the executors of the stores registered now keep their work until someone runs it,
  /// each once.
  var waitingWorks: [any WaitingWork] {
    var works: [any WaitingWork] = []
    for core in snapshot.compactMap({ $0.element?.core }) {
      guard let work = core.waitingWork, !works.contains(where: { $0 === work }) else { continue }
      works.append(work)
    }
    return works
  }
}

/// Whether an awaited action was committed, once it has ended; a task may wait for it.
// `@unchecked Sendable`: `ended` and `waiter` are guarded by `lock`.
private final class AwaitedOutcome: @unchecked Sendable {
  private let lock = Lock()
  private var ended: Bool?
  private var waiter: CheckedContinuation<Bool, Never>?

  /// Whether the action was committed; `nil` while it is under way.
  var result: Bool? {
    lock.withLock { ended }
  }

  /// The action ended: it was committed, or not.
  func resolve(_ committed: Bool) {
    lock.lock()
    ended = committed
    let waiter = self.waiter.take()
    lock.unlock()
    waiter?.resume(returning: committed)
  }

  /// Waits until the action has ended.
  func value(isolation: isolated (any Actor)?) async -> Bool {
    await withCheckedContinuation(isolation: isolation) { continuation in
      lock.lock()
      guard let ended else {
        waiter = continuation
        lock.unlock()
        return
      }
      lock.unlock()
      continuation.resume(returning: ended)
    }
  }

  /// Suspends for a millisecond, whether or not the task is cancelled (a cancelled task must
  /// not spin).
  func pause(isolation: isolated (any Actor)?) async {
    await withCheckedContinuation(isolation: isolation) { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { continuation.resume() }
    }
  }
}
