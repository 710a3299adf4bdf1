/// Middleware for every store of every state type, registered for the whole process.
///
/// It sees actions and states as values it can cast or describe:
///
/// ```swift
/// struct Analytics: SharedMiddleware {
///   func didCommit(action: any Sendable, state: any State) {
///     track("\(type(of: action)).\(action)")
///   }
/// }
///
/// let registration = SharedMiddlewares.add(Analytics())
/// // …
/// registration.remove()
/// ```
///
/// Its hooks mean what the hooks of ``Middleware`` mean, and run at the same points. Shared
/// middleware wraps a store's own: its interception and `willCommit` run before the store's,
/// its `didCommit` and `didCancel` after; shared middleware added first runs first.
///
/// > Important: Hooks run on each store's ``Executor``, so one shared middleware may be called
/// > from several threads at once, for different stores. Guard what it keeps with a lock.
public protocol SharedMiddleware: Sendable {
  /// Decides whether `action` goes on; see ``Middleware/intercept(action:state:proceed:)``.
  ///
  /// - Parameters:
  ///   - action: The action on its way to the commit.
  ///   - state: The state of the store that received it.
  ///   - proceed: Call it once to let the action go on, or its ``Proceed/cancel()``.
  func intercept(action: any Sendable, state: any State, proceed: Proceed)

  /// Called right before an action is committed.
  ///
  /// - Parameters:
  ///   - action: The action about to be committed.
  ///   - state: The state of the store that commits it.
  func willCommit(action: any Sendable, state: any State)

  /// Called right after an action was committed.
  ///
  /// - Parameters:
  ///   - action: The action just committed.
  ///   - state: The state of the store that committed it.
  func didCommit(action: any Sendable, state: any State)

  /// Called when a middleware cancelled an action.
  ///
  /// - Parameters:
  ///   - action: The cancelled action.
  ///   - state: The state of the store that received it.
  func didCancel(action: any Sendable, state: any State)
}

extension SharedMiddleware {
  /// Proceeds at once.
  ///
  /// A store learns from the first action that a middleware keeps this implementation, and
  /// from then on lets its actions through without an interception.
  public func intercept(action: any Sendable, state: any State, proceed: Proceed) {
    proceed.proceedByDefault(of: SharedDefaultInterception<Self>.self)
  }

  /// Does nothing.
  public func willCommit(action: any Sendable, state: any State) {}

  /// Does nothing.
  public func didCommit(action: any Sendable, state: any State) {}

  /// Does nothing.
  public func didCancel(action: any Sendable, state: any State) {}
}

/// The process-wide list of ``SharedMiddleware``.
public enum SharedMiddlewares: Sendable {
  /// Adds `middleware` for every store, live or future, until the registration is removed.
  ///
  /// Actions already on their way through a store's middleware finish with the list they
  /// started with; the next action uses the new list.
  ///
  /// - Parameter middleware: The middleware to add, after those added before it.
  /// - Returns: The registration that removes it.
  @discardableResult
  public static func add(_ middleware: some SharedMiddleware) -> SharedMiddlewareRegistration {
    SharedMiddlewareRegistration(key: Registries.addShared(middleware))
  }
}

/// The registration of one ``SharedMiddleware``; ``remove()`` ends it.
///
/// Dropping the registration does not remove the middleware.
public final class SharedMiddlewareRegistration: Sendable {
  private let key: UInt64

  init(key: UInt64) {
    self.key = key
  }

  /// Removes the middleware from every store. Calling it again does nothing.
  public func remove() {
    Registries.removeShared(key)
  }
}
