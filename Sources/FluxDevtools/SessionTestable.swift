import FluxCore

/// A state that a test generated from a recorded session (``SessionTest``) can make: fresh, as
/// the store of a label began the session.
///
/// It is the one thing about a store that its log cannot hold. Give it once, in the app or in its
/// test target, to each state type whose sessions you turn into tests:
///
/// ```swift
/// extension TodoListState: SessionTestable {
///   static func sessionStart(label: String) -> TodoListState {
///     TodoListState(name: String(label.dropFirst("list:".count)))
///   }
/// }
/// ```
///
/// The generated test makes each store with it, the state's mutations (`Mutations()`), and the
/// middleware that cancelled actions of the store in the session (each made with `init()`), then
/// dispatches the store's actions and compares its ``Snapshotting/snapshot`` after each with the
/// one the log recorded.
public protocol SessionTestable: Snapshotting where Action: Equatable {
  /// A state as the store labelled `label` began its session.
  ///
  /// - Parameter label: The store's label in the log, as given to
  ///   ``ActionLog/middleware(label:for:snapshots:)``.
  /// - Returns: A new state, which the test's store owns.
  static func sessionStart(label: String) -> Self
}
