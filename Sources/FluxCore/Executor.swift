import Dispatch

/// Where and when a piece of work runs: inline, on the main queue, on a dispatch queue, or in
/// a context of your own.
///
/// A ``Store`` commits its actions on its executor, and FluxReactive's `observe(on:)` and
/// bindings deliver values on one.
///
/// ```swift
/// let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .mainThread)
/// ```
///
/// > Important: ``mainThread`` keeps one process-wide order: work runs inline only when the
/// > caller is on the main queue and no other ``mainThread`` work is waiting; otherwise it is
/// > enqueued behind that work. "On the main queue" is decided by queue identity, not thread
/// > identity, so it holds on Linux when a worker thread drains the main queue.
public struct Executor: Sendable {
  @usableFromInline
  enum Kind: Sendable {
    case immediate
    case mainThread
    case queue(DispatchQueue)
    case custom(@Sendable (@escaping @Sendable () -> Void) -> Void)
    case waiting(any WaitingWork)
  }

  @usableFromInline
  let kind: Kind

  private init(kind: Kind) {
    self.kind = kind
  }

  /// Runs work at once, synchronously, on the calling thread.
  public static var immediate: Executor { Executor(kind: .immediate) }

  /// Runs work on the main queue: inline when already there with no ``mainThread`` work
  /// pending, otherwise enqueued, in submission order across the whole process.
  ///
  /// Work submitted from inside running ``mainThread`` work is never nested inside it: it runs
  /// after the current work (and after any work submitted before it, from any thread), before
  /// the call that started that work returns.
  ///
  /// Nor does a nested run loop (a modal loop, a test's `wait(for:)`) spun by running
  /// ``mainThread`` work run other ``mainThread`` work inside it: that work runs after the
  /// running work returns. Running work that waits in such a loop for other ``mainThread``
  /// work (a commit of a store on ``mainThread``, say) waits until it gives up.
  public static var mainThread: Executor { Executor(kind: .mainThread) }

  /// Enqueues work asynchronously on `queue`.
  ///
  /// - Parameter queue: The queue to run work on. A concurrent queue is fine for a ``Store``:
  ///   a store never runs two of its commits at once.
  public static func queue(_ queue: DispatchQueue) -> Executor {
    Executor(kind: .queue(queue))
  }

  /// A context that runs the work it is given: what ``init(_:)`` takes.
  public typealias Context = @Sendable (@escaping @Sendable () -> Void) -> Void

  /// Creates an executor from a context that runs the work it is given.
  ///
  /// The context must run each piece of work exactly once, eventually. A context that never
  /// runs it leaves the work waiting: a ``Store`` on such an executor keeps its actions queued
  /// (in order) and commits nothing, without error.
  ///
  /// ```swift
  /// let serial = DispatchQueue(label: "state")
  /// let executor = Executor { work in serial.async(execute: work) }
  /// ```
  ///
  /// - Parameter context: Called with each piece of work, on the submitting thread.
  public init(_ context: @escaping Context) {
    self.kind = .custom(context)
  }

  /// Creates an executor that keeps its work in `work` until someone runs it: a task that
  /// awaits an action of a store on it runs that work itself (see ``WaitingWork``).
  ///
  /// - Parameter work: Where the work waits.
  package init(waitingIn work: any WaitingWork) {
    self.kind = .waiting(work)
  }

  /// Where work waits until someone runs it, for an executor made with ``init(waitingIn:)``.
  package var waitingWork: (any WaitingWork)? {
    if case .waiting(let work) = kind { return work }
    return nil
  }

  /// Whether work runs inline on the submitting thread.
  @inlinable
  package var isImmediate: Bool {
    if case .immediate = kind { return true }
    return false
  }

  /// Whether work waits for the main queue to run it: ``mainThread``, or ``queue(_:)`` of the
  /// main queue. (A queue that targets the main queue, or a context that hands work to it, is
  /// not seen.)
  package var runsOnMainQueue: Bool {
    switch kind {
    case .mainThread: true
    // By the queue, not the object: on Linux each `DispatchQueue.main` is a new object.
    case .queue(let queue): MainQueue.shared.isMainQueue(queue)
    case .immediate, .custom, .waiting: false
    }
  }

  /// Runs `work` in this executor's context.
  ///
  /// - Parameter work: The work to run, exactly once.
  public func execute(_ work: @escaping @Sendable () -> Void) {
    switch kind {
    case .immediate:
      work()
    case .mainThread:
      MainQueue.shared.execute(work)
    case .queue(let queue):
      queue.async(execute: work)
    case .custom(let context):
      context(work)
    case .waiting(let waiting):
      waiting.submit(work)
    }
  }
}
