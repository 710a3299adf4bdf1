import FluxCore
import Foundation

/// The commits that commands from the inspector wait for, so that the log marks each one's line
/// with what it was (`"steered":"jump"`), and the command learns that its store committed it.
///
/// A command dispatches its action to the store like any other, from the connection's own queue;
/// the app's actions may come before it. So the log's middleware, in `didCommit` (and
/// `didCancel`), asks whether the action it logs is the one a command waits for, by its JSON as
/// the log writes it: one encoding while a command waits, nothing otherwise (a lock and a count).
/// An action of the app that is the same, byte for byte, as a command's, committed between its
/// dispatch and its commit, would be taken for it: the two commits do the same, and only which
/// row says "steered" differs.
// `@unchecked Sendable`: `waiting` is guarded by `lock`, and so is each ticket's `outcome`.
final class SteeringMarks: @unchecked Sendable {
  /// One commit a command waits for.
  // `@unchecked Sendable`: `outcome` is guarded by the lock of the marks that made it; the rest
  // are constants.
  final class Ticket: @unchecked Sendable {
    let label: String
    let kind: String
    let json: Data
    fileprivate var outcome: Bool?
    fileprivate let ended = DispatchSemaphore(value: 0)

    init(label: String, kind: String, json: Data) {
      self.label = label
      self.kind = kind
      self.json = json
    }
  }

  /// What became of the action a ticket waits for.
  enum Outcome: Equatable {
    case committed
    /// A middleware cancelled it.
    case cancelled
    /// Not ended within the time: the store's executor is busy, or a middleware holds it, or the
    /// store was freed.
    case timedOut
  }

  private let lock = Lock()
  private var waiting: [Ticket] = []

  /// Waits for the commit of `action` to the store labelled `label`; `nil` if the action cannot be
  /// encoded.
  func expect<Action: Encodable>(_ action: Action, label: String, kind: String) -> Ticket? {
    guard let json = Self.encode(action) else { return nil }
    let ticket = Ticket(label: label, kind: kind, json: json)
    lock.withLock { waiting.append(ticket) }
    return ticket
  }

  /// Waits up to `timeout` seconds for the action of `ticket` to end. A ticket that times out
  /// still waits: its line is marked when it commits (``isEnded(_:)`` then says so).
  func wait(_ ticket: Ticket, timeout: Double) -> Outcome {
    _ = ticket.ended.wait(timeout: .now() + max(0, min(timeout, 86_400)))
    return lock.withLock {
      switch ticket.outcome {
      case true?: .committed
      case false?: .cancelled
      case nil: .timedOut
      }
    }
  }

  /// Whether the action of `ticket` has ended, however late.
  func isEnded(_ ticket: Ticket) -> Bool {
    lock.withLock { ticket.outcome != nil }
  }

  /// Stops waiting for `ticket`'s action.
  func forget(_ ticket: Ticket) {
    lock.withLock { waiting.removeAll { $0 === ticket } }
  }

  /// What the line of `action`, just committed (or cancelled) by the store labelled `label`, is
  /// marked: the kind of the command that waits for it, or `nil`.
  func claim<Action: Encodable>(label: String, action: Action, committed: Bool = true) -> String? {
    guard lock.withLock({ waiting.contains { $0.label == label } }) else { return nil }
    guard let json = Self.encode(action) else { return nil }
    let ticket: Ticket? = lock.withLock {
      guard let index = waiting.firstIndex(where: { $0.label == label && $0.json == json }) else { return nil }
      let ticket = waiting.remove(at: index)
      ticket.outcome = committed
      return ticket
    }
    ticket?.ended.signal()
    return ticket?.kind
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
