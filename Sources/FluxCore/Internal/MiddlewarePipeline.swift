/// A store's middleware in running order: shared middleware around the store's own.
///
/// Immutable; a store swaps in a new one when the shared list changes. A store without any
/// middleware has no pipeline at all, so the feature costs it one `nil` check per commit.
///
/// Each hook has its own array of closures in one-field structs, each borrowed from its
/// array for its call: a hook call retains nothing.
///
/// A middleware that keeps the default `intercept` proceeds at once, always: the first time it
/// does so, through `Proceed.proceedByDefault(of:)` with the key recorded for its stage, the
/// store marks that stage `passesThrough`, and later actions skip it, with no ticket and no
/// lock round trip. The key names the protocol and the type (``DefaultInterception``,
/// ``SharedDefaultInterception``), and the check makes this sound: the default `intercept` of
/// the very protocol and type at that stage ran, and a type that has its own `intercept` for
/// that protocol never runs that default, so the stage's `intercept` is the default for every
/// action. (A middleware whose own `intercept` calls the default of another type, or of the
/// other protocol, reports another key, and is never skipped.)
// `@unchecked Sendable`: every property is a constant except `passesThrough`, which only the
// lock of the store that owns the pipeline guards.
@usableFromInline
final class MiddlewarePipeline<State: FluxCore.State>: @unchecked Sendable {
  @usableFromInline
  struct Interceptor: Sendable {
    @usableFromInline
    let call: @Sendable (State.Action, State, Proceed) -> Void
    /// The key of the default `intercept` that `call` runs if its middleware keeps it.
    let type: ObjectIdentifier
  }

  @usableFromInline
  struct Hook: Sendable {
    @usableFromInline
    let call: @Sendable (State.Action, State) -> Void
  }

  /// Interceptions in order: shared first, then the store's.
  @usableFromInline
  let interceptors: ContiguousArray<Interceptor>
  /// For each interceptor, whether it is known to keep the default `intercept`. Guarded by the
  /// lock of the store that owns the pipeline (each store builds its own); only ever set.
  @usableFromInline @exclusivity(unchecked)
  var passesThrough: ContiguousArray<Bool>
  /// `willCommit` in order: shared first, then the store's.
  @usableFromInline
  let willCommitHooks: ContiguousArray<Hook>
  /// `didCommit` in order: the store's first, then shared.
  @usableFromInline
  let didCommitHooks: ContiguousArray<Hook>
  /// `didCancel` in order: the store's first, then shared.
  @usableFromInline
  let didCancelHooks: ContiguousArray<Hook>
  /// Whether one of the store's own middleware asked for an ``ActionTrace`` of each action.
  @usableFromInline
  let tracesActions: Bool
  /// The type of each interceptor's middleware, in the order of `interceptors`, to name it in
  /// a trace.
  @usableFromInline
  let middlewareTypes: ContiguousArray<Any.Type>

  /// The pipeline of `own` middleware wrapped by `shared`, or `nil` when both are empty.
  static func make(own: [AnyMiddleware<State>], shared: [any SharedMiddleware]) -> MiddlewarePipeline? {
    if own.isEmpty && shared.isEmpty { return nil }
    return MiddlewarePipeline(own: own, shared: shared.map { AnyMiddleware($0) })
  }

  private init(own: [AnyMiddleware<State>], shared: [AnyMiddleware<State>]) {
    let outerFirst = shared + own
    let innerFirst = own + shared
    interceptors = ContiguousArray(outerFirst.map { Interceptor(call: $0.interceptBody, type: $0.interceptor) })
    passesThrough = ContiguousArray(repeating: false, count: outerFirst.count)
    willCommitHooks = ContiguousArray(outerFirst.map { Hook(call: $0.willCommitBody) })
    didCommitHooks = ContiguousArray(innerFirst.map { Hook(call: $0.didCommitBody) })
    didCancelHooks = ContiguousArray(innerFirst.map { Hook(call: $0.didCancelBody) })
    tracesActions = own.contains { $0.tracesActions }
    middlewareTypes = ContiguousArray(outerFirst.map(\.middlewareType))
  }

  /// The first stage from `stage` on whose middleware must intercept: known pass-through
  /// stages are skipped. Called with the store's lock held.
  @inlinable
  func firstIntercepting(from stage: Int) -> Int {
    var stage = stage
    while stage < passesThrough.count && passesThrough[stage] { stage &+= 1 }
    return stage
  }

  /// Marks `stage` as passing through if `type`'s default `intercept` decided for it and is
  /// the stage's own. Called with the store's lock held.
  @usableFromInline
  func learn(stage: Int, decidedByDefaultOf type: ObjectIdentifier?) {
    if let type, stage < interceptors.count, interceptors[stage].type == type { passesThrough[stage] = true }
  }

  @inlinable
  func intercept(at index: Int, _ action: State.Action, _ state: State, _ proceed: Proceed) {
    interceptors[index].call(action, state, proceed)
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

  /// Calls each hook in order. The pipeline's arrays never change, so each hook is borrowed
  /// from the array for its call; reading it through an `UnsafeBufferPointer` instead would
  /// retain and release its closure.
  @inlinable
  static func run(_ hooks: ContiguousArray<Hook>, _ action: State.Action, _ state: State) {
    var index = 0
    while index < hooks.count {
      hooks[index].call(action, state)
      index &+= 1
    }
  }
}
