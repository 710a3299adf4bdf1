/// The state a ``Store`` manages; it names the store's action type and its mutations.
///
/// Keep the properties of a state out of reach of everything but its ``Mutations`` (which
/// change them) and its ``Computed`` extensions (which publish them), for example with
/// `fileprivate` in one file:
///
/// ```swift
/// final class CounterState: State {
///   typealias Action = CounterAction
///   typealias Mutations = CounterMutations
///
///   fileprivate let count = Variable(0)
/// }
/// ```
///
/// A state is a class (a store and its computed properties share one instance) and `Sendable`
/// (commits may run on another thread than the one that reads). The only way to change it is
/// ``Mutations/commit(action:state:)``, reached by dispatching an action.
public protocol State: AnyObject, Sendable {
  /// The actions that a store of this state accepts.
  associatedtype Action: Sendable
  /// The mutations that commit those actions to this state.
  associatedtype Mutations: FluxCore.Mutations where Mutations.State == Self
}
