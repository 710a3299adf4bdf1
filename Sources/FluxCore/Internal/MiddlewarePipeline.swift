/// A store's middleware in running order: shared middleware around the store's own.
///
/// Immutable; a store swaps in a new one when the shared list changes. A store without any
/// middleware has no pipeline at all, so the feature costs it one `nil` check per commit.
@usableFromInline
final class MiddlewarePipeline<State: FluxCore.State>: Sendable {
  /// Interceptions in order: shared first, then the store's.
  let interceptors: [AnyMiddleware<State>]
  /// `willCommit` in order: shared first, then the store's.
  let before: [AnyMiddleware<State>]
  /// `didCommit` and `didCancel` in order: the store's first, then shared.
  let after: [AnyMiddleware<State>]

  /// The pipeline of `own` middleware wrapped by `shared`, or `nil` when both are empty.
  static func make(own: [AnyMiddleware<State>], shared: [any SharedMiddleware]) -> MiddlewarePipeline? {
    if own.isEmpty && shared.isEmpty { return nil }
    return MiddlewarePipeline(own: own, shared: shared.map { AnyMiddleware($0) })
  }

  private init(own: [AnyMiddleware<State>], shared: [AnyMiddleware<State>]) {
    interceptors = shared + own
    before = shared + own
    after = own + shared
  }

  func willCommit(_ action: State.Action, _ state: State) {
    for middleware in before { middleware.willCommit(action: action, state: state) }
  }

  func didCommit(_ action: State.Action, _ state: State) {
    for middleware in after { middleware.didCommit(action: action, state: state) }
  }

  func didCancel(_ action: State.Action, _ state: State) {
    for middleware in after { middleware.didCancel(action: action, state: state) }
  }
}
