import Dispatch
import Foundation

@testable import FluxCore

// Small parts of `StoreChaosTests`: counters, flags and references that its rounds share
// between threads.

/// A flag that one caller takes.
final class ChaosOnce: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var taken = false

  /// `true` for the first caller only.
  func take() -> Bool {
    lock.withLock {
      defer { taken = true }
      return !taken
    }
  }
}

/// A store's actions, set once the store exists.
final class ChaosReach: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var stored: Actions<ChaosState>?

  var actions: Actions<ChaosState>? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

/// Counts of named events.
final class ChaosStats: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var counts: [String: Int] = [:]

  func count(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }

  func merge(into other: ChaosStats) {
    for (name, count) in lock.withLock({ counts }) { other.lock.withLock { other.counts[name, default: 0] += count } }
  }

  var description: String {
    lock.withLock { counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
  }
}

/// Counts the live instances of what holds one, and may run user code when freed.
final class ChaosToken: Sendable {
  let live: Counter
  let onDeinit: (@Sendable () -> Void)?

  init(_ live: Counter, onDeinit: (@Sendable () -> Void)? = nil) {
    self.live = live
    self.onDeinit = onDeinit
    live.increment()
  }

  deinit {
    onDeinit?()
    live.decrement()
  }
}

/// A weak reference, to see an object freed.
final class ChaosWeak: @unchecked Sendable {
  // Written once, in `init`.
  weak var object: AnyObject?

  init(_ object: AnyObject) {
    self.object = object
  }
}

/// Waits for one action's end: it must learn it exactly once.
final class ChaosWaiter: @unchecked Sendable {
  let chaos: Chaos
  let id: Int
  /// The store waited on; `nil` for a global dispatch.
  weak var state: ChaosState?
  private let lock = NSLock()
  // Guarded by `lock`.
  private var answers = 0

  init(chaos: Chaos, id: Int, state: ChaosState?) {
    self.chaos = chaos
    self.id = id
    self.state = state
  }

  func answer(_ committed: Bool) {
    let count = lock.withLock {
      answers += 1
      return answers
    }
    guard count == 1 else { return chaos.fail("waiter of \(id) answered \(count) times") }
    chaos.stats.count(committed ? "answerTrue" : "answerFalse")
    chaos.waiting.decrement()
    state?.answered(id, committed)
  }
}

func chaosSpin(microseconds: Int) {
  let end = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1_000
  while DispatchTime.now().uptimeNanoseconds < end {}
}
