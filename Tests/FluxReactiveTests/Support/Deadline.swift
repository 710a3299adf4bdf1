import Dispatch
import Foundation

/// Runs `body(index)` on `count` threads of their own and reports whether all of them finished
/// within `seconds`.
///
/// For tests of deadlocks: a regression makes the test fail instead of hanging. Threads that
/// are still blocked when the time is up are left behind.
func finishOnThreads(_ count: Int, within seconds: Int, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
  let finished = DispatchSemaphore(value: 0)
  for index in 0..<count {
    Thread {
      body(index)
      finished.signal()
    }.start()
  }
  let deadline = DispatchTime.now() + .seconds(seconds)
  for _ in 0..<count where finished.wait(timeout: deadline) == .timedOut {
    return false
  }
  return true
}
