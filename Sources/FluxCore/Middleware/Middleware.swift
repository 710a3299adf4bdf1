/// Code that sees, and may hold back, every action of the stores of one state type: logging,
/// analytics, confirmation prompts, authorization checks, test recording.
///
/// Give middleware to a store when you create it; each hook is optional:
///
/// ```swift
/// struct Confirmation: Middleware {
///   func intercept(action: CartAction, state: CartState, proceed: Proceed) {
///     guard case .clear = action else { return proceed() }
///     askUser { confirmed in confirmed ? proceed() : proceed.cancel() }
///   }
/// }
///
/// let store = Store<CartState>(
///   state: .init(), mutations: .init(), executor: .mainThread,
///   middlewares: [AnyMiddleware(Confirmation()), AnyMiddleware(LoggingMiddleware())])
/// ```
///
/// For each action the store runs, in order: ``intercept(action:state:proceed:)`` of every
/// middleware (each must proceed for the next to run), then ``willCommit(action:state:)`` of
/// every middleware, the commit, and ``didCommit(action:state:)`` of every middleware. An
/// action that a middleware cancels reaches ``didCancel(action:state:)`` of every middleware
/// instead, and is not committed. Shared middleware (``SharedMiddleware``) wraps a store's
/// own: its interception and `willCommit` run before the store's, its `didCommit` and
/// `didCancel` after. Within one list, the middleware given first runs first.
///
/// > Important: Every hook runs on the store's ``Executor``, one action at a time, like the
/// > commit itself; never two hooks of one store at once. A hook may dispatch actions: they are
/// > queued and committed after the current action, never nested.
public protocol Middleware<State>: Sendable {
  /// The state type of the stores this middleware serves.
  associatedtype State: FluxCore.State

  /// Decides whether `action` goes on: call `proceed()` now, later from any thread, or call
  /// `proceed.cancel()`.
  ///
  /// The default implementation proceeds at once. Proceeding later delays the action without
  /// holding up actions dispatched after it: when it proceeds, it continues through the rest
  /// of the middleware and is committed on the store's executor, one commit at a time. An
  /// action whose ``Proceed`` is released without a decision is cancelled.
  ///
  /// - Parameters:
  ///   - action: The action on its way to the commit.
  ///   - state: The store's state.
  ///   - proceed: Call it once to let the action go on, or its ``Proceed/cancel()``.
  func intercept(action: State.Action, state: State, proceed: Proceed)

  /// Called right before `action` is committed, with the state as it is before the commit.
  ///
  /// - Parameters:
  ///   - action: The action about to be committed.
  ///   - state: The store's state.
  func willCommit(action: State.Action, state: State)

  /// Called right after `action` was committed, with the state as the commit left it.
  ///
  /// - Parameters:
  ///   - action: The action just committed.
  ///   - state: The store's state.
  func didCommit(action: State.Action, state: State)

  /// Called when a middleware cancelled `action`; it will not be committed.
  ///
  /// - Parameters:
  ///   - action: The cancelled action.
  ///   - state: The store's state.
  func didCancel(action: State.Action, state: State)
}

extension Middleware {
  /// Proceeds at once.
  ///
  /// A store learns from the first action that a middleware keeps this implementation, and
  /// from then on lets its actions through without an interception.
  public func intercept(action: State.Action, state: State, proceed: Proceed) {
    proceed.proceedByDefault(of: DefaultInterception<Self>.self)
  }

  /// Does nothing.
  public func willCommit(action: State.Action, state: State) {}

  /// Does nothing.
  public func didCommit(action: State.Action, state: State) {}

  /// Does nothing.
  public func didCancel(action: State.Action, state: State) {}
}
