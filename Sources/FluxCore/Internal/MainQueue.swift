import Dispatch

/// The process-wide order of ``Executor/mainThread`` work.
///
/// Work runs inline when the caller is on the main queue and nothing submitted earlier is still
/// waiting to start; otherwise it goes to the back of the main queue. Counting what waits keeps
/// the order first in, first out across every caller.
///
/// Work submitted from inside running `.mainThread` work is never nested inside it: it goes to
/// a queue of its own that the runner (the call that started the running work, inline or from
/// the main queue) drains, in submission order, right after the current work item and before
/// it returns. So a value sent from an observer on `.mainThread` reaches the observers after
/// the current one returns (rule 2), with no hop through the main queue: a commit on the main
/// queue still updates a main-thread binding before the dispatching call returns.
package final class MainQueue: @unchecked Sendable {
  /// The one instance: the order is process-wide.
  package static let shared = MainQueue()

  private let key = DispatchSpecificKey<UInt8>()
  private let lock = Lock()
  // Guarded by `lock`: main-queue work submitted and not yet started.
  private var pending = 0
  // Guarded by `lock`: whether `.mainThread` work is running on the main queue.
  private var isRunning = false
  // Guarded by `lock`: work submitted from inside running work, for its runner to run next.
  private var following = FIFOBuffer<@Sendable () -> Void>()

  private init() {
    DispatchQueue.main.setSpecific(key: key, value: 1)
  }

  /// Whether the caller runs on the main queue (by queue identity, not thread identity).
  package var isOnMainQueue: Bool {
    DispatchQueue.getSpecific(key: key) != nil
  }

  /// Runs `work` inline if on the main queue with nothing pending; queues it after the running
  /// work if called from inside it; enqueues it on the main queue otherwise.
  package func execute(_ work: @escaping @Sendable () -> Void) {
    if isOnMainQueue {
      lock.lock()
      if isRunning {
        following.append(work)
        lock.unlock()
        return
      }
      let runInline = pending == 0
      if runInline {
        isRunning = true
      } else {
        pending += 1
      }
      lock.unlock()
      if runInline {
        run(work)
        return
      }
    } else {
      lock.lock()
      pending += 1
      lock.unlock()
    }
    DispatchQueue.main.async {
      self.lock.lock()
      self.pending -= 1
      // Set unless this block runs inside running work (a nested run loop): that work's
      // runner then also runs what this work submits.
      let wasRunning = self.isRunning
      self.isRunning = true
      self.lock.unlock()
      self.run(work, wasRunning: wasRunning)
    }
  }

  /// Runs `work`, then every piece of work submitted meanwhile, in order; `isRunning` is set.
  private func run(_ work: @Sendable () -> Void, wasRunning: Bool = false) {
    work()
    while true {
      lock.lock()
      let next = following.popFirst()
      if next == nil { isRunning = wasRunning }
      lock.unlock()
      guard let next else { return }
      next()
    }
  }
}
