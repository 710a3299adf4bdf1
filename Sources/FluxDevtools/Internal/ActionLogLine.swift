import Foundation

/// One line of an action log, as written: keys sorted, the action encoded by its own
/// `Encodable` conformance.
struct ActionLogLine<Action: Encodable>: Encodable {
  let store: String
  let time: String
  let outcome: ActionOutcome
  let durationNanoseconds: UInt64?
  let action: Action

  /// The line as JSON and a line break.
  func encoded() throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
  }
}

/// The fields of a line that do not depend on the action's type, as read back.
struct ActionLogHeader: Decodable {
  let store: String
  let time: String
  let outcome: ActionOutcome
  let durationNanoseconds: UInt64?
}

/// The action of a line, decoded as `Action`.
struct ActionLogBody<Action: Decodable>: Decodable {
  let action: Action
}

/// The instants of an action log: ISO 8601, in UTC, with milliseconds.
enum LogTime {
  static func string(from date: Date) -> String {
    formatter().string(from: date)
  }

  static func date(from string: String) -> Date? {
    formatter().date(from: string)
  }

  private static func formatter() -> ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }
}
