/// A middleware for stores of `State`, of any concrete type, for a store's middleware list.
///
/// ```swift
/// let store = Store<CounterState>(
///   state: .init(), mutations: .init(), executor: .immediate,
///   middlewares: [AnyMiddleware(recorder), AnyMiddleware(LoggingMiddleware())])
/// ```
///
/// It wraps either a ``Middleware`` for `State` or a ``SharedMiddleware``, which then serves
/// only the stores it is given to.
public struct AnyMiddleware<State: FluxCore.State>: Middleware {
  @usableFromInline
  let interceptBody: @Sendable (State.Action, State, Proceed) -> Void
  /// The default interception `interceptBody` would run if the wrapped type kept it: that of
  /// ``Middleware`` or of ``SharedMiddleware``, whichever the type was wrapped as, for that type
  /// (for a wrapped `AnyMiddleware`, the type it wraps). See ``DefaultInterception``.
  @usableFromInline
  let interceptor: ObjectIdentifier
  @usableFromInline
  let willCommitBody: @Sendable (State.Action, State) -> Void
  @usableFromInline
  let didCommitBody: @Sendable (State.Action, State) -> Void
  @usableFromInline
  let didCancelBody: @Sendable (State.Action, State) -> Void
  /// The type of the wrapped middleware, to name it in an ``ActionTrace``.
  @usableFromInline
  let middlewareType: Any.Type
  /// Whether the store traces its actions for this middleware (``tracingActions()``).
  @usableFromInline
  package internal(set) var tracesActions: Bool
  /// Whether a store given this middleware stays apart from global dispatch and shared
  /// middleware (``keepingStoreApart()``).
  @usableFromInline
  package internal(set) var keepsStoreApart: Bool

  /// Wraps a middleware for `State`.
  ///
  /// - Parameter middleware: The middleware to wrap.
  // `@inlinable`: the closures are then specialized for `Wrapped` where it is wrapped, so that a
  // hook costs one closure call, with no witness-table call behind it (a store with one
  // pass-through middleware: about 25 → 22.5 ns per action).
  @inlinable
  public init<Wrapped: Middleware>(_ middleware: Wrapped) where Wrapped.State == State {
    if let wrapped = middleware as? AnyMiddleware<State> {
      self = wrapped
      return
    }
    interceptor = ObjectIdentifier(DefaultInterception<Wrapped>.self)
    middlewareType = Wrapped.self
    tracesActions = false
    keepsStoreApart = false
    interceptBody = { middleware.intercept(action: $0, state: $1, proceed: $2) }
    willCommitBody = { middleware.willCommit(action: $0, state: $1) }
    didCommitBody = { middleware.didCommit(action: $0, state: $1) }
    didCancelBody = { middleware.didCancel(action: $0, state: $1) }
  }

  /// Wraps a shared middleware, to serve only the stores given this value.
  ///
  /// - Parameter middleware: The middleware to wrap.
  public init<Wrapped: SharedMiddleware>(_ middleware: Wrapped) {
    interceptor = ObjectIdentifier(SharedDefaultInterception<Wrapped>.self)
    middlewareType = Wrapped.self
    tracesActions = false
    keepsStoreApart = false
    interceptBody = { middleware.intercept(action: $0, state: $1, proceed: $2) }
    willCommitBody = { middleware.willCommit(action: $0, state: $1) }
    didCommitBody = { middleware.didCommit(action: $0, state: $1) }
    didCancelBody = { middleware.didCancel(action: $0, state: $1) }
  }

  /// The same middleware, for which the store traces its actions: its `didCommit` and
  /// `didCancel` hooks then find the action's ``ActionTrace`` as ``ActionTrace/current(for:)``
  /// (the global dispatch it came from, the middleware that held or cancelled it).
  ///
  /// Only a store's own middleware can ask: a store whose own middleware does not ask traces
  /// nothing and pays nothing for it.
  package func tracingActions() -> AnyMiddleware {
    var traced = self
    traced.tracesActions = true
    return traced
  }

  /// The same middleware, which keeps the store it is given to apart: no global dispatch
  /// (`Store<S>.actions`) reaches that store, and no shared middleware wraps it. For the test kit,
  /// whose tests of a recorded session each replay one store while other tests of the process
  /// dispatch to every store of its state type.
  package func keepingStoreApart() -> AnyMiddleware {
    var apart = self
    apart.keepsStoreApart = true
    return apart
  }

  /// Calls the wrapped middleware's interception.
  @inlinable
  public func intercept(action: State.Action, state: State, proceed: Proceed) {
    interceptBody(action, state, proceed)
  }

  /// Calls the wrapped middleware's `willCommit`.
  @inlinable
  public func willCommit(action: State.Action, state: State) {
    willCommitBody(action, state)
  }

  /// Calls the wrapped middleware's `didCommit`.
  @inlinable
  public func didCommit(action: State.Action, state: State) {
    didCommitBody(action, state)
  }

  /// Calls the wrapped middleware's `didCancel`.
  @inlinable
  public func didCancel(action: State.Action, state: State) {
    didCancelBody(action, state)
  }
}

/// Names the default `intercept` of ``Middleware`` for `Conformer`, as the key by which a store
/// learns that a stage passes through (see ``MiddlewarePipeline``).
///
/// A type may conform to both middleware protocols, keep one protocol's default interception
/// and write the other's: the key names the protocol as well as the type, so that the default
/// of one, reached from the other's own interception, never marks that stage.
@usableFromInline
enum DefaultInterception<Conformer> {}

/// Names the default `intercept` of ``SharedMiddleware`` for `Conformer`; see
/// ``DefaultInterception``.
@usableFromInline
enum SharedDefaultInterception<Conformer> {}
