import Dispatch
import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The identity of the calling thread.
func currentThreadID() -> pthread_t {
  pthread_self()
}

/// Whether the caller runs on `thread`.
func isCurrentThread(_ thread: pthread_t) -> Bool {
  pthread_equal(pthread_self(), thread) != 0
}

/// Lets another thread run, to vary how threads interleave.
func yieldThread() {
  sched_yield()
}

/// Runs `body(index)` on `count` threads of their own, started together, and returns when all
/// have finished.
///
/// Each body runs on a dedicated thread (not a pooled one), so bodies that block on each
/// other's locks still make progress.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let finished = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  for index in 0..<count {
    finished.enter()
    let thread = Thread {
      start.wait()
      body(index)
      finished.leave()
    }
    thread.start()
  }
  for _ in 0..<count { start.signal() }
  finished.wait()
}
