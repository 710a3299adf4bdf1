import FluxCore
import Foundation

/// The commits that commands from the inspector are waiting for, so that the log marks each one's
/// line with what it was (`"steered":"jump"`).
///
/// A command dispatches its action to the store like any other, from the connection's own task;
/// the app's actions may come before it. So the log's middleware, in `didCommit`, asks whether the
/// action it logs is the one a command waits for, by its JSON as the log writes it: one encoding
/// while a command waits, nothing otherwise (a lock and a count). An action of the app that is the
/// same, byte for byte, as a command's, committed between its dispatch and its commit, would be
/// marked in its place: the two commits do the same, and only which row says "steered" differs.
// `@unchecked Sendable`: `waiting` and `claimed` are guarded by `lock`.
final class SteeringMarks: @unchecked Sendable {
  /// One commit a command waits for.
  final class Ticket: Sendable {
    let label: String
    let kind: String
    let json: Data

    init(label: String, kind: String, json: Data) {
      self.label = label
      self.kind = kind
      self.json = json
    }
  }

  private let lock = Lock()
  private var waiting: [Ticket] = []
  private var claimed: Set<ObjectIdentifier> = []

  /// Waits for the commit of `action` to the store labelled `label`; `nil` if the action cannot be
  /// encoded (its line will not be marked).
  func expect<Action: Encodable>(_ action: Action, label: String, kind: String) -> Ticket? {
    guard let json = Self.encode(action) else { return nil }
    let ticket = Ticket(label: label, kind: kind, json: json)
    lock.withLock { waiting.append(ticket) }
    return ticket
  }

  /// Stops waiting for `ticket`'s commit.
  func forget(_ ticket: Ticket) {
    lock.withLock {
      waiting.removeAll { $0 === ticket }
      claimed.remove(ObjectIdentifier(ticket))
    }
  }

  /// Whether `ticket`'s commit was logged.
  func isClaimed(_ ticket: Ticket) -> Bool {
    lock.withLock { claimed.contains(ObjectIdentifier(ticket)) }
  }

  /// What the line of `action`, just committed by the store labelled `label`, is marked: the
  /// kind of the command that waits for it, or `nil`.
  func claim<Action: Encodable>(label: String, action: Action) -> String? {
    guard lock.withLock({ waiting.contains { $0.label == label } }) else { return nil }
    guard let json = Self.encode(action) else { return nil }
    return lock.withLock {
      guard let index = waiting.firstIndex(where: { $0.label == label && $0.json == json }) else { return nil }
      let ticket = waiting.remove(at: index)
      claimed.insert(ObjectIdentifier(ticket))
      return ticket.kind
    }
  }

  /// `action` as the log writes it.
  static func encode<Action: Encodable>(_ action: Action) -> Data? {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: NonFiniteNumbers.positiveInfinity, negativeInfinity: NonFiniteNumbers.negativeInfinity,
      nan: NonFiniteNumbers.nan)
    return try? encoder.encode(action)
  }
}
