import Dispatch

/// The process-wide order of ``Executor/mainThread`` work: one first-in, first-out queue of
/// every piece of work submitted and not yet started, whoever submitted it.
///
/// Work runs inline when the caller is on the main queue and nothing submitted earlier is still
/// waiting; otherwise it waits its turn in ``waiting``.
///
/// Work submitted from inside running `.mainThread` work is never nested inside it: it waits
/// (marked as following) and the runner (the call that started the running work, inline or
/// from the main queue) goes on taking work from the front of the queue, after the current
/// item and before it returns, until no following work is left. So a value sent from an
/// observer on `.mainThread` reaches the observers after the current one returns (rule 2), with
/// no hop through the main queue: a commit on the main queue still updates a main-thread
/// binding before the dispatching call returns. Work another thread submitted earlier is ahead
/// of it in the queue, so it runs first: the order stays the order of submission.
///
/// Work submitted from elsewhere also schedules one block on the main queue, which runs the
/// front of the queue up to and including one such piece of work (and whatever follows the work
/// it runs). Runners may take that work first; the block then finds less, or nothing, to do. No
/// work is left behind: there are always at least as many blocks not yet started, plus pieces
/// left to a runner (below), as pieces of work from elsewhere still waiting, since a block takes
/// one such piece whenever one waits, and a runner that takes one leaves a block spare.
///
/// Running work may spin a nested run loop (a modal loop, a test's wait), which runs main-queue
/// blocks inside it. A block that finds work running runs nothing, which would nest it; it
/// leaves its piece to the runner of the running work (``deferredCount``), which runs it, in
/// order, after that work returns. So `.mainThread` work never runs inside other `.mainThread`
/// work, and work that waits, in a nested run loop, for other `.mainThread` work to run waits
/// until it gives up.
// `@unchecked Sendable`: every variable is guarded by `lock`; `key` is constant.
package final class MainQueue: @unchecked Sendable {
  /// One piece of submitted work.
  private struct Item {
    let work: @Sendable () -> Void
    /// Submitted from inside running work, so run by that work's runner.
    let isFollowing: Bool
  }

  /// The one instance: the order is process-wide.
  package static let shared = MainQueue()

  private let key = DispatchSpecificKey<UInt8>()
  private let lock = Lock()
  // Guarded by `lock`: every piece of work submitted and not yet started, in submission order.
  private var waiting = FIFOBuffer<Item>()
  // Guarded by `lock`: how many of `waiting` are following work.
  private var followingCount = 0
  // Guarded by `lock`: whether `.mainThread` work is running on the main queue.
  private var isRunning = false
  // Guarded by `lock`: pieces of work from elsewhere whose blocks ran inside running work (a
  // nested run loop) and left them to the runner of that work.
  private var deferredCount = 0

  private init() {
    DispatchQueue.main.setSpecific(key: key, value: 1)
  }

  /// Whether the caller runs on the main queue (by queue identity, not thread identity).
  package var isOnMainQueue: Bool {
    DispatchQueue.getSpecific(key: key) != nil
  }

  /// Whether `queue` is the main queue itself (not a queue that targets it), whatever object
  /// stands for it: on Linux, each `DispatchQueue.main` is a new one.
  package func isMainQueue(_ queue: DispatchQueue) -> Bool {
    queue.getSpecific(key: key) != nil
  }

  /// Runs `work` inline if on the main queue with nothing waiting; queues it for the runner if
  /// called from inside running work; queues it and schedules a block on the main queue
  /// otherwise.
  package func execute(_ work: @escaping @Sendable () -> Void) {
    let onMainQueue = isOnMainQueue
    lock.lock()
    // On the main queue, `isRunning` means the caller is inside running work: the main queue
    // runs one block at a time, and only a run sets it.
    if onMainQueue && isRunning {
      waiting.append(Item(work: work, isFollowing: true))
      followingCount += 1
      lock.unlock()
      return
    }
    if onMainQueue && waiting.count == 0 {
      isRunning = true
      lock.unlock()
      work()
      return runWaiting(owesOne: false)
    }
    waiting.append(Item(work: work, isFollowing: false))
    lock.unlock()
    DispatchQueue.main.async {
      self.lock.lock()
      if self.isRunning {
        // Inside running work (a nested run loop: a modal loop, a test's wait). Running anything
        // here would nest it inside that work, so the block leaves its piece to that work's
        // runner, which runs it after the work returns.
        self.deferredCount += 1
        self.lock.unlock()
        return
      }
      self.isRunning = true
      self.lock.unlock()
      self.runWaiting(owesOne: true)
    }
  }

  /// Runs waiting work from the front, in order, while some of it is following work, or
  /// work from elsewhere that a block left to it, and, if `owesOne` (a scheduled block), until
  /// it has run one piece that is not following work. Then clears `isRunning`.
  private func runWaiting(owesOne: Bool) {
    var owesOne = owesOne
    while true {
      lock.lock()
      guard followingCount > 0 || owesOne || deferredCount > 0, let next = waiting.popFirst() else {
        // Nothing waits, so no block is owed anything: what a block left over is done.
        if waiting.count == 0 { deferredCount = 0 }
        isRunning = false
        lock.unlock()
        return
      }
      if next.isFollowing {
        followingCount -= 1
      } else if owesOne {
        owesOne = false
      } else if deferredCount > 0 {
        deferredCount -= 1
      }
      lock.unlock()
      next.work()
    }
  }
}
