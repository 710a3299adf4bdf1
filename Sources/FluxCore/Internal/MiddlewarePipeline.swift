/// A store's middleware in running order: shared middleware around the store's own.
///
/// Immutable; a store swaps in a new one when the shared list changes. A store without any
/// middleware has no pipeline at all, so the feature costs it one `nil` check per commit.
///
/// Each hook has its own array of closures in one-field structs, called through a borrowed
/// buffer: a hook call retains nothing.
@usableFromInline
final class MiddlewarePipeline<State: FluxCore.State>: Sendable {
  @usableFromInline
  struct Interceptor: Sendable {
    @usableFromInline
    let call: @Sendable (State.Action, State, Proceed) -> Void
  }

  @usableFromInline
  struct Hook: Sendable {
    @usableFromInline
    let call: @Sendable (State.Action, State) -> Void
  }

  /// Interceptions in order: shared first, then the store's.
  @usableFromInline
  let interceptors: ContiguousArray<Interceptor>
  /// `willCommit` in order: shared first, then the store's.
  @usableFromInline
  let willCommitHooks: ContiguousArray<Hook>
  /// `didCommit` in order: the store's first, then shared.
  @usableFromInline
  let didCommitHooks: ContiguousArray<Hook>
  /// `didCancel` in order: the store's first, then shared.
  @usableFromInline
  let didCancelHooks: ContiguousArray<Hook>

  /// The pipeline of `own` middleware wrapped by `shared`, or `nil` when both are empty.
  static func make(own: [AnyMiddleware<State>], shared: [any SharedMiddleware]) -> MiddlewarePipeline? {
    if own.isEmpty && shared.isEmpty { return nil }
    return MiddlewarePipeline(own: own, shared: shared.map { AnyMiddleware($0) })
  }

  private init(own: [AnyMiddleware<State>], shared: [AnyMiddleware<State>]) {
    let outerFirst = shared + own
    let innerFirst = own + shared
    interceptors = ContiguousArray(outerFirst.map { Interceptor(call: $0.interceptBody) })
    willCommitHooks = ContiguousArray(outerFirst.map { Hook(call: $0.willCommitBody) })
    didCommitHooks = ContiguousArray(innerFirst.map { Hook(call: $0.didCommitBody) })
    didCancelHooks = ContiguousArray(innerFirst.map { Hook(call: $0.didCancelBody) })
  }

  @inlinable
  func intercept(at index: Int, _ action: State.Action, _ state: State, _ proceed: Proceed) {
    interceptors.withUnsafeBufferPointer { $0[index].call(action, state, proceed) }
  }

  @inlinable
  func willCommit(_ action: State.Action, _ state: State) {
    Self.run(willCommitHooks, action, state)
  }

  @inlinable
  func didCommit(_ action: State.Action, _ state: State) {
    Self.run(didCommitHooks, action, state)
  }

  @inlinable
  func didCancel(_ action: State.Action, _ state: State) {
    Self.run(didCancelHooks, action, state)
  }

  @inlinable
  static func run(_ hooks: ContiguousArray<Hook>, _ action: State.Action, _ state: State) {
    hooks.withUnsafeBufferPointer { hooks in
      for index in hooks.indices { hooks[index].call(action, state) }
    }
  }
}
