import Dispatch
import FluxCore
import Foundation

/// A thread-safe list of what was received, in order.
final class Recorder<Element: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var elements: [Element] = []

  func append(_ element: Element) {
    lock.withLock { elements.append(element) }
  }

  var values: [Element] {
    lock.withLock { elements }
  }
}

/// An executor whose work waits until the test runs it.
final class ManualExecutor: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var work: [@Sendable () -> Void] = []

  var executor: Executor {
    Executor { work in self.lock.withLock { self.work.append(work) } }
  }

  var pendingCount: Int {
    lock.withLock { work.count }
  }

  /// Runs what waits, including work submitted while running, until nothing waits.
  func drain() {
    while true {
      let next: (@Sendable () -> Void)? = lock.withLock { work.isEmpty ? nil : work.removeFirst() }
      guard let next else { return }
      next()
    }
  }

  /// Drops what waits without running it.
  func discardAll() {
    lock.withLock { work.removeAll() }
  }
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

/// Runs `body(thread, iteration)` on `threads` threads at once, `iterations` times each, and
/// returns when all are done.
func race(threads: Int = 4, iterations: Int, _ body: @escaping @Sendable (Int, Int) -> Void) {
  runOnThreads(threads) { thread in
    for iteration in 0..<iterations { body(thread, iteration) }
  }
}

/// A thread-safe counter.
final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var count = 0

  @discardableResult
  func increment() -> Int {
    lock.withLock {
      count += 1
      return count
    }
  }

  func decrement() {
    lock.withLock { count -= 1 }
  }

  var value: Int {
    lock.withLock { count }
  }
}

/// Waits (without timing assertions) until `condition` holds, polling; fails after a generous
/// bound so a broken test ends instead of hanging.
func waitUntil(_ condition: () -> Bool) -> Bool {
  for _ in 0..<20_000 {
    if condition() { return true }
    usleep(500)
  }
  return condition()
}

/// Hops to the main queue and returns what `body` returns there.
func onMainQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { continuation in
    DispatchQueue.main.async { continuation.resume(returning: body()) }
  }
}

/// Tracks whether an object has been freed.
final class DeallocFlag: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var freed = false

  var isFreed: Bool { lock.withLock { freed } }

  func markFreed() { lock.withLock { freed = true } }
}

/// An object that marks a flag when freed.
final class Tracked: @unchecked Sendable {
  let flag: DeallocFlag

  init(_ flag: DeallocFlag = DeallocFlag()) {
    self.flag = flag
  }

  deinit { flag.markFreed() }
}

/// A mutable box for a test to hand a value to a closure created before the value exists.
final class Box<Value>: @unchecked Sendable {
  // Written once before any concurrent reads in the tests that use it.
  nonisolated(unsafe) var value: Value

  init(_ value: Value) {
    self.value = value
  }
}

/// Runs `body` on the main queue until it returns `true`, at most `attempts` times.
///
/// For checks that hold only while no other `.mainThread` work is pending: tests of other
/// suites run in parallel and may have some queued at any moment.
func eventuallyOnMainQueue(attempts: Int = 200, _ body: @escaping @Sendable () -> Bool) async -> Bool {
  for _ in 0..<attempts {
    if await onMainQueue(body) { return true }
    usleep(1_000)
  }
  return false
}

/// `waitUntil` for async tests: polls without blocking a thread of the cooperative pool, which
/// other tests' tasks may need meanwhile; fails after a generous bound.
func eventually(_ condition: () -> Bool) async -> Bool {
  for _ in 0..<60_000 {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 1_000_000)
  }
  return condition()
}
