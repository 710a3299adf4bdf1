import Dispatch
import FluxReactive
import Foundation
import Testing

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

/// Rule 3's deadlock check: two variables whose observers read each other's value are set from
/// two threads at once, to `make(1)` … `make(5_000)` each. Records an issue if the setters
/// deadlock or an observer missed its read; returns the two last values, `nil` on a deadlock.
func setTwoVariablesReadingEachOther<Value: Sendable>(
  from initial: Value, _ make: @escaping @Sendable (Int) -> Value
) -> (Value, Value)? {
  let first = Variable(initial)
  let second = Variable(initial)
  let reads = Counter()
  let keep = [
    first.signal.observe { _ in
      _ = second.value
      reads.increment()
    },
    second.signal.observe { _ in
      _ = first.value
      reads.increment()
    },
  ]
  let finished = finishOnThreads(2, within: 30) { thread in
    let variable = thread == 0 ? first : second
    for index in 1...5_000 {
      variable.value = make(index)
      if index % 64 == 0 { yieldThread() }
    }
  }
  #expect(finished, "the two setters deadlocked")
  guard finished else {
    // The deadlocked threads hold the variables' locks: freeing them would wait forever.
    _ = Unmanaged.passRetained(Box((first, second, keep)))
    return nil
  }
  #expect(reads.value == 10_002, "each observer reads once per value, the current one included")
  for disposable in keep { disposable.dispose() }
  return (first.value, second.value)
}

/// An object whose deinit runs `body` on another thread and waits for it: freed under a lock
/// that `body` takes, it never finishes.
final class RunsElsewhereWhenFreed: Sendable {
  let body: @Sendable () -> Void

  init(_ body: @escaping @Sendable () -> Void) {
    self.body = body
  }

  deinit {
    let body = self.body
    let done = DispatchSemaphore(value: 0)
    Thread {
      body()
      done.signal()
    }.start()
    done.wait()
  }
}

/// Polls `condition` until it holds or `seconds` have passed, without blocking a thread of the
/// cooperative pool; for deadlock tests, whose failure should come sooner than `eventually`'s.
func eventuallyWithin(seconds: Int, _ condition: () -> Bool) async -> Bool {
  for _ in 0..<(seconds * 1_000) {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 1_000_000)
  }
  return condition()
}
