/// A read-only proxy that publishes properties of a ``State``.
///
/// Extend it in the file that declares the state, so it can reach the state's `fileprivate`
/// properties, and hand out only what views may read:
///
/// ```swift
/// extension Computed where State == CounterState {
///   var countTextValues: Signal<String> {
///     state.count.signal.map { String($0) }
///   }
/// }
/// ```
public struct Computed<State: FluxCore.State>: Sendable {
  /// The state this proxy reads from.
  public let state: State

  /// Creates a proxy over `state`.
  ///
  /// - Parameter state: The state to publish.
  public init(state: State) {
    self.state = state
  }
}
