/// The one place where a ``State`` changes: committing an action to it.
///
/// ```swift
/// struct CounterMutations: Mutations {
///   func commit(action: CounterAction, state: CounterState) {
///     switch action {
///     case .increment: state.count.value += 1
///     case .decrement: state.count.value -= 1
///     }
///   }
/// }
/// ```
///
/// > Important: A store calls ``commit(action:state:)`` on its ``Executor``, one action at a
/// > time, in dispatch order. Change the state synchronously, inside the call. An action
/// > dispatched from inside a commit (to the same store) is committed after this one returns.
public protocol Mutations: Sendable {
  /// The state these mutations change.
  associatedtype State: FluxCore.State

  /// Applies `action` to `state`, synchronously.
  ///
  /// - Parameters:
  ///   - action: The action being committed.
  ///   - state: The store's state.
  func commit(action: State.Action, state: State)
}
