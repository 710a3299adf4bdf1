import FluxCore

/// A state that can be saved as a `Codable` snapshot, and set back to one through an action,
/// for ``TimeTravel``.
///
/// The restore is an action like any other, committed by the state's mutations: the only way
/// to change a state stays `Mutations.commit`.
///
/// ```swift
/// extension CounterState: Snapshotting {
///   var snapshot: Int { count.value }
///   static func restore(_ snapshot: Int) -> CounterAction { .set(snapshot) }
/// }
/// ```
public protocol Snapshotting: FluxCore.State {
  /// What a snapshot holds: everything needed to set the state back.
  associatedtype Snapshot: Codable & Sendable

  /// The state as it is now.
  var snapshot: Snapshot { get }

  /// The action whose commit sets the state to `snapshot`.
  ///
  /// - Parameter snapshot: A snapshot of a state of this type.
  /// - Returns: The action that restores it.
  static func restore(_ snapshot: Snapshot) -> Action
}
