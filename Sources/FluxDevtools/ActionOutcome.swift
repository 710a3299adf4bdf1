/// How an action's life ended: committed, or cancelled by a middleware.
public enum ActionOutcome: String, Codable, Sendable {
  /// The store committed the action.
  case committed
  /// A middleware cancelled the action; it was not committed.
  case cancelled
}
