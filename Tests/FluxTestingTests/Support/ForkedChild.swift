#if os(Linux)
  import Glibc

  /// In the process of an exit test that forked `child`: returns once the child has ended by
  /// itself, not by a signal (under a sanitizer its leak check may set the exit code). If it has
  /// not ended within 30 seconds, it would wait for ever: kills it and ends this process with
  /// code 2; ends it with code 3 if a signal ended the child.
  func waitForChildToEndByItself(_ child: pid_t) {
    var status: Int32 = 0
    var ended = false
    for _ in 0..<3_000 where !ended {
      ended = waitpid(child, &status, WNOHANG) == child
      if !ended { usleep(10_000) }
    }
    if !ended {
      kill(child, SIGKILL)
      _exit(2)
    }
    guard status & 0x7f == 0 else { _exit(3) }
  }
#endif
