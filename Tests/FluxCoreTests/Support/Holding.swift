import FluxCore
import Foundation

/// Keeps the ``Proceed`` of every action it intercepts, by action, like a confirmation dialog;
/// records what reaches its hooks.
///
/// Its own lock guards what it keeps, and `didCancel` takes that lock too: releasing proceeds
/// under it must not run the cancel hooks in the releasing stack.
final class Holder<Tag>: Middleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var kept: [Int: Proceed] = [:]
  let intercepted = Recorder<Int>()
  let cancelled = Recorder<Int>()
  let onDeinit: (@Sendable () -> Void)?

  init(onDeinit: (@Sendable () -> Void)? = nil) {
    self.onDeinit = onDeinit
  }

  deinit { onDeinit?() }

  func intercept(action: Int, state: LogState<Tag>, proceed: Proceed) {
    intercepted.append(action)
    lock.withLock { kept[action] = proceed }
  }

  func didCancel(action: Int, state: LogState<Tag>) {
    lock.withLock { cancelled.append(action) }
  }

  var heldCount: Int { lock.withLock { kept.count } }

  /// Takes the proceed kept for `action`; the caller decides it (or drops it) after the lock.
  func take(_ action: Int) -> Proceed? {
    lock.withLock { kept.removeValue(forKey: action) }
  }

  /// Releases every kept proceed without deciding, under this middleware's own lock.
  func dropAllUnderLock() {
    lock.withLock { kept.removeAll() }
  }
}

/// A shared middleware that records the actions of `LogState<Tag>` stores it intercepts, holds
/// those `hold` says to hold, and proceeds with everything else at once.
final class SharedHolder<Tag>: SharedMiddleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var kept: [Int: Proceed] = [:]
  let intercepted = Recorder<Int>()
  let hold: @Sendable (Int) -> Bool
  let onDeinit: (@Sendable () -> Void)?

  init(hold: @escaping @Sendable (Int) -> Bool = { _ in false }, onDeinit: (@Sendable () -> Void)? = nil) {
    self.hold = hold
    self.onDeinit = onDeinit
  }

  deinit { onDeinit?() }

  func intercept(action: any Sendable, state: any State, proceed: Proceed) {
    guard state is LogState<Tag>, let action = action as? Int else { return proceed() }
    intercepted.append(action)
    if hold(action) {
      lock.withLock { kept[action] = proceed }
    } else {
      proceed()
    }
  }

  func take(_ action: Int) -> Proceed? {
    lock.withLock { kept.removeValue(forKey: action) }
  }
}

/// Runs `body` on a thread of its own and waits at most `seconds` for it; `false` if it did not
/// return by then (a deadlock: the thread is left behind).
func returnsInTime(seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
  let done = DispatchSemaphore(value: 0)
  Thread {
    body()
    done.signal()
  }.start()
  return done.wait(timeout: .now() + seconds) == .success
}
