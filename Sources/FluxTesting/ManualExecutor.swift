import FluxCore

/// An executor whose work waits until the test runs it.
///
/// A store on ``executor`` commits nothing by itself: its actions wait until the test calls
/// ``runNext()`` or ``runAll()``, and are committed on the test's own thread. A test of a store
/// meant for `Executor.mainThread` or a dispatch queue becomes deterministic and
/// single-threaded, and can look at the state between two steps.
///
/// A store asks for one piece of work at a time, a drain, which commits every action waiting in
/// the store when it runs: two actions dispatched before ``runNext()`` are one piece of work,
/// committed by that one call. To look at the state between two actions, dispatch the second
/// after running the first.
///
/// ```swift
/// let manual = ManualExecutor()
/// let store = Store<CounterState>(state: .init(), mutations: .init(), executor: manual.executor)
/// store.actions.increment()
/// // manual.pendingCount == 1: nothing committed yet
/// manual.runAll()
/// // the increment is committed
/// ```
///
/// A task that awaits an action of a store on this executor runs the work itself: what waits,
/// first submitted first, on the task's thread and in its isolation, until that action has
/// ended. So `dispatchAndWait(action:)`, `Replay.run()` and `TimeTravel.goTo(_:in:)` return
/// into a store on this executor (a ``StoreTester``'s too), as they would on any other:
///
/// ```swift
/// let manual = ManualExecutor()
/// let store = Store<CounterState>(state: .init(), mutations: .init(), executor: manual.executor)
/// await store.actions.dispatchAndWait(action: .increment)  // runs the drain, and returns
/// ```
///
/// > Important: Thread-safe: work may be submitted from any thread, and runs on the thread
/// > that calls ``runNext()`` or ``runAll()``, or that awaits an action. Work that is never
/// > run never runs: a store on this executor then keeps its actions waiting, in order,
/// > without error. One piece of work comes from another thread: when a middleware lets go of
/// > an action's `Proceed` without deciding, a worker thread submits the drain that cancels it,
/// > a moment later (unless a dispatch to the store submits one first); a ``StoreTester``
/// > waits for that drain and runs it before it asserts.
public final class ManualExecutor: WaitingWork, @unchecked Sendable {
  // `queue` is guarded by `lock`; the lock is never held while work runs, nor while work is
  // released (the queue hands each piece out, or all of them, before letting go of its slot).
  private let lock = Lock()
  private var queue = FIFOBuffer<@Sendable () -> Void>()

  /// Creates an executor with nothing waiting.
  public init() {}

  /// The executor to give a store, or an `observe(on:)`: it appends each piece of work to this
  /// executor's queue.
  public var executor: Executor {
    Executor(waitingIn: self)
  }

  /// Appends `work` to the queue: what ``executor`` does with each piece of work.
  @usableFromInline
  package func submit(_ work: @escaping @Sendable () -> Void) {
    lock.withLock { queue.append(work) }
  }

  /// How many pieces of work wait to run.
  public var pendingCount: Int {
    lock.withLock { queue.count }
  }

  /// Runs the piece of work that has waited longest, if any.
  ///
  /// - Returns: `true` if a piece of work ran, `false` if nothing was waiting.
  @discardableResult
  public func runNext() -> Bool {
    guard let work = takeNext() else { return false }
    work()
    return true
  }

  /// Runs waiting work, first submitted first, until nothing waits.
  ///
  /// Work submitted while this runs (an action dispatched from a commit, say) runs too, before
  /// `runAll()` returns.
  ///
  /// - Returns: How many pieces of work ran.
  @discardableResult
  public func runAll() -> Int {
    var count = 0
    while runNext() { count += 1 }
    return count
  }

  /// Drops every waiting piece of work without running it.
  ///
  /// > Important: A store on this executor whose drain waits here is dropped with it: that
  /// > store stays busy with the drain that never runs, and commits nothing more, ever. Drop
  /// > work only once the stores on this executor are done with, or of your own.
  public func discardAll() {
    let dropped = lock.withLock { queue.removeAll() }
    withExtendedLifetime(dropped) {}  // released here, after the lock
  }

  private func takeNext() -> (@Sendable () -> Void)? {
    // The queue keeps the work not yet run at the front of its storage as it goes, so work
    // that keeps submitting more while `runAll()` runs takes no more room than what waits.
    lock.withLock { queue.popFirst() }
  }
}
