import Dispatch

/// The process-wide order of ``Executor/mainThread`` work.
///
/// Work runs inline when the caller is on the main queue and nothing submitted earlier is still
/// waiting to start; otherwise it goes to the back of the main queue. Counting what waits keeps
/// the order first in, first out across every caller.
package final class MainQueue: @unchecked Sendable {
  /// The one instance: the order is process-wide.
  package static let shared = MainQueue()

  private let key = DispatchSpecificKey<UInt8>()
  private let lock = Lock()
  // Guarded by `lock`: main-queue work submitted and not yet started.
  private var pending = 0

  private init() {
    DispatchQueue.main.setSpecific(key: key, value: 1)
  }

  /// Whether the caller runs on the main queue (by queue identity, not thread identity).
  package var isOnMainQueue: Bool {
    DispatchQueue.getSpecific(key: key) != nil
  }

  /// Runs `work` inline if on the main queue with nothing pending; enqueues it otherwise.
  package func execute(_ work: @escaping @Sendable () -> Void) {
    if isOnMainQueue {
      lock.lock()
      let runInline = pending == 0
      if !runInline { pending += 1 }
      lock.unlock()
      if runInline {
        work()
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
      self.lock.unlock()
      work()
    }
  }
}
