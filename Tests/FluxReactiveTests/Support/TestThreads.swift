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

#if os(Linux)
  /// The voluntary context switches of the calling thread so far: how many times it slept.
  func voluntaryContextSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD
    return usage.ru_nvcsw
  }
#endif
