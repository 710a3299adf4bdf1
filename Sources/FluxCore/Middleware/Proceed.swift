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
  // Set once; weak loads are thread-safe.
  private weak var target: (any ProceedTarget)?
  // Guarded by the target's lock: which interception this decision belongs to. The target
  // reuses the object only when it holds the sole reference.
  var serial: UInt64

  init(target: any ProceedTarget, serial: UInt64) {
    self.target = target
    self.serial = serial
  }

  deinit {
    target?.abandon(self)
  }

  /// Lets the action go on to the next middleware, and then to the commit.
  public func callAsFunction() {
    target?.resolve(self, proceed: true)
  }

  /// Cancels the action: it is not committed, and every middleware's `didCancel` hook sees it.
  public func cancel() {
    target?.resolve(self, proceed: false)
  }
}

/// What a ``Proceed`` reports its decision to: a store's core.
protocol ProceedTarget: AnyObject, Sendable {
  func resolve(_ proceed: Proceed, proceed: Bool)
  func abandon(_ proceed: Proceed)
}
