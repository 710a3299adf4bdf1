/// The one-shot decision of a middleware's interception: call it to let the action go on, or
/// ``cancel()`` it.
///
/// ```swift
/// func intercept(action: CartAction, state: CartState, proceed: Proceed) {
///   confirm { confirmed in confirmed ? proceed() : proceed.cancel() }
/// }
/// ```
///
/// Decide exactly once, now or later, from any thread. Deciding a second time is a
/// programming error and stops the program with a message naming the mistake. Releasing the
/// last reference without deciding cancels the action. Deciding after the store was freed does
/// nothing.
public final class Proceed: @unchecked Sendable {
  // Immutable. Held strongly: a store's core owns no state once its store is freed, and it
  // drops the one proceed it keeps for reuse then, so this keeps nothing else alive.
  private let target: any ProceedTarget
  /// The lock of the target, which guards the three properties below.
  @usableFromInline
  let lock: Lock
  /// Which interception this decision belongs to. The target reuses the object only when it
  /// holds the sole reference.
  @usableFromInline @exclusivity(unchecked)
  var serial: UInt64 = 0
  /// The interception is running now, on the store's drain.
  @usableFromInline @exclusivity(unchecked)
  var isRunning = false
  /// The decision made while the interception was running.
  @usableFromInline @exclusivity(unchecked)
  var decision: Bool?

  @usableFromInline
  init(target: any ProceedTarget, lock: Lock) {
    self.target = target
    self.lock = lock
  }

  deinit {
    target.abandon(self)
  }

  /// Lets the action go on to the next middleware, and then to the commit.
  public func callAsFunction() {
    decide(true)
  }

  /// Cancels the action: it is not committed, and every middleware's `didCancel` hook sees it.
  public func cancel() {
    decide(false)
  }

  private func decide(_ goesOn: Bool) {
    lock.lock()
    if isRunning, decision == nil {
      decision = goesOn
      lock.unlock()
      return
    }
    lock.unlock()
    target.resolve(self, proceed: goesOn)
  }
}

/// What a ``Proceed`` reports its decision to: a store's core.
@usableFromInline
protocol ProceedTarget: AnyObject, Sendable {
  func resolve(_ proceed: Proceed, proceed: Bool)
  func abandon(_ proceed: Proceed)
}
