/// Work that waits until someone runs it, on the thread that does: the test kit's
/// `ManualExecutor` keeps its work so (``Executor/init(waitingIn:)``).
///
/// Nothing runs such work by itself, so a task that awaits an action of a store on such an
/// executor (``Actions/dispatchAndWait(action:isolation:)``, and so a replay or a time travel)
/// runs it: what waits, first submitted first, on the awaiting task's thread, until the action
/// has ended.
@usableFromInline
package protocol WaitingWork: AnyObject, Sendable {
  /// Keeps `work` until it is run.
  func submit(_ work: @escaping @Sendable () -> Void)

  /// Runs the piece of work that has waited longest, on the calling thread.
  ///
  /// - Returns: Whether a piece of work ran.
  func runNext() -> Bool
}
