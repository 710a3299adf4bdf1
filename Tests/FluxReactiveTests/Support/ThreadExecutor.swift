import Dispatch
import Foundation

/// A serial executor that runs every job on one thread of its own, so that two tasks isolated to
/// it run on the same thread, one while the other is suspended: what a main actor drained by one
/// thread, or any actor, does at random, made certain.
final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var jobs: [UnownedJob] = []
  private var isStopped = false
  private let ready = DispatchSemaphore(value: 0)
  /// The thread's id, set once it runs; read after `started` was waited for.
  private(set) var thread: pthread_t?
  private let started = DispatchSemaphore(value: 0)

  init() {
    Thread { [self] in
      thread = pthread_self()
      started.signal()
      while true {
        ready.wait()
        let next: UnownedJob? = lock.withLock {
          jobs.isEmpty ? nil : jobs.removeFirst()
        }
        if let next {
          next.runSynchronously(on: asUnownedSerialExecutor())
        } else if lock.withLock({ isStopped }) {
          return
        }
      }
    }.start()
    started.wait()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    lock.withLock { jobs.append(job) }
    ready.signal()
  }

  /// Ends the thread once the jobs enqueued so far have run.
  func stop() {
    lock.withLock { isStopped = true }
    ready.signal()
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }
}

/// An actor whose jobs all run on one thread (``ThreadExecutor``).
actor OneThreadActor {
  let executor = ThreadExecutor()

  nonisolated var unownedExecutor: UnownedSerialExecutor {
    executor.asUnownedSerialExecutor()
  }

  /// Whether the caller runs on this actor's thread.
  nonisolated func isOnItsThread() -> Bool {
    guard let thread = executor.thread else { return false }
    return pthread_equal(pthread_self(), thread) != 0
  }
}
