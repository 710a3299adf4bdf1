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
  /// pending there).
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
    await withCheckedContinuation(isolation: isolation) { continuation in
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
}
