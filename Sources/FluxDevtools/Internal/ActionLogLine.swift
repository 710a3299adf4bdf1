import FluxCore
import Foundation

/// One line of an action log, as written: keys sorted, the action encoded by its own
/// `Encodable` conformance; the optional fields (``ActionLog/Fields``, the state) absent when
/// `nil`.
struct ActionLogLine<Action: Encodable>: Encodable {
  let store: String
  let time: String
  let outcome: ActionOutcome
  let durationNanoseconds: UInt64?
  let action: Action
  var sequence: UInt64?
  var state: EncodedState?
  /// A state read through `Mirror` (``StateSnapshots/mirror``): read-only, so under a key of its own.
  var stateMirror: JSONValue?
  var stateError: String?
  var holds: [HoldField]?
  var cancelledBy: String?
  var dispatch: String?
  var swift: String?
  var swiftError: String?
  var stateType: String?
  var stateForm: String?
  /// The command of an inspector that caused the commit: `jump`, `present`, `skip`, `unskip`,
  /// `import` or `dispatch` (see ``InspectorConnection``).
  var steered: String?

  init(store: String, time: String, outcome: ActionOutcome, durationNanoseconds: UInt64?, action: Action) {
    self.store = store
    self.time = time
    self.outcome = outcome
    self.durationNanoseconds = durationNanoseconds
    self.action = action
  }

  /// Fills the fields of `fields` that come from the action's trace.
  mutating func trace(_ trace: TraceFields, fields: ActionLog.Fields, outcome: ActionOutcome) {
    if fields.contains(.holds), !trace.holds.isEmpty {
      holds = trace.holds.map { HoldField(middleware: typeName($0.middleware), nanoseconds: $0.nanoseconds) }
    }
    if fields.contains(.cancelledBy), outcome == .cancelled, let middleware = trace.cancelledBy {
      cancelledBy = typeName(middleware)
    }
    if fields.contains(.dispatch), trace.dispatch != 0 { dispatch = String(trace.dispatch) }
  }

  /// Fills the fields of ``ActionLog/Fields/swift``: the action as Swift (or why it cannot be),
  /// the state type, and how the state on the line, if any, was taken.
  mutating func describeForSwift(state type: String, form: SnapshotForm?) {
    do {
      swift = try SwiftLiteral.action(action)
    } catch {
      swiftError = error.reason
    }
    stateType = type
    if state != nil || stateMirror != nil { stateForm = form?.rawValue }
  }

  /// The encoder of lines: keys sorted, slashes as they are, non-finite numbers as strings. One
  /// encoder serves every line of a log's queue, one line at a time.
  static func makeEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // JSON has no number for an infinity or not-a-number, and the encoder's default throws on
    // one: an action that carries one (a ratio of zero to zero, say) would become an error
    // line, and the whole log unreadable. Written as these strings, they read back as the same
    // values (``Recording/Entry/action(as:)`` reads them so), and a string field that holds one
    // of these words is still a string: the strings stand for numbers only where a number is read.
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: NonFiniteNumbers.positiveInfinity, negativeInfinity: NonFiniteNumbers.negativeInfinity,
      nan: NonFiniteNumbers.nan)
    return encoder
  }

  /// The line as JSON and a line break, by `encoder` (``makeEncoder()``).
  func encoded(with encoder: JSONEncoder) throws -> String {
    String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
  }
}

/// The name of a middleware type in a line: as Swift writes the type, without its module.
func typeName(_ type: Any.Type) -> String {
  String(describing: type)
}

/// How a log took the states it wrote (`"stateForm"`, with ``ActionLog/Fields/swift``).
enum SnapshotForm: String, Sendable {
  /// The state's ``Snapshotting/snapshot``: ``StateSnapshots/snapshot``.
  case snapshot
  /// A function of the app's: ``StateSnapshots/encoding(_:)``.
  case encoding
  /// The state as `Mirror` shows it: ``StateSnapshots/mirror``, written as `"stateMirror"`.
  case mirror
}

/// A state read through `Mirror`, which a line writes as `"stateMirror"`.
struct MirrorState: Encodable, Sendable {
  let value: JSONValue

  func encode(to encoder: any Encoder) throws {
    try value.encode(to: encoder)
  }
}

/// One element of a line's `holds`.
struct HoldField: Codable, Sendable, Equatable {
  let middleware: String
  let nanoseconds: UInt64

  init(middleware: String, nanoseconds: UInt64) {
    self.middleware = middleware
    self.nanoseconds = nanoseconds
  }

  private enum CodingKeys: String, CodingKey {
    case middleware, nanoseconds
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    middleware = try container.decode(String.self, forKey: .middleware)
    do {
      nanoseconds = try container.decode(UInt64.self, forKey: .nanoseconds)
    } catch let error where !(error is DecodingError) {
      // A number that does not fit: the decoder's own error, which it tells as a line that is not
      // JSON, without the key.
      throw DecodingError.dataCorruptedError(
        forKey: .nanoseconds, in: container, debugDescription: "not a whole number from 0 to \(UInt64.max)")
    }
  }
}

/// A state snapshot of any `Encodable` type, encoded as itself.
struct EncodedState: Encodable {
  let value: any Encodable

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(value)
  }
}

/// The line that stands for an action that could not be encoded.
struct ErrorLine: Encodable {
  let error: String
  let store: String
  let sequence: UInt64?
}

/// How a line writes the floating-point numbers that JSON has no number for.
enum NonFiniteNumbers {
  static let positiveInfinity = "Infinity"
  static let negativeInfinity = "-Infinity"
  static let nan = "NaN"
}

/// The fields of a line that do not depend on the action's type, as read back.
struct ActionLogHeader: Decodable {
  let store: String
  let time: String
  let outcome: ActionOutcome
  let durationNanoseconds: UInt64?
  let sequence: UInt64?
  let holds: [HoldField]
  let cancelledBy: String?
  let dispatch: String?
  let hasState: Bool
  let hasStateMirror: Bool
  let swift: String?
  let swiftError: String?
  let stateType: String?
  let stateForm: String?
  let steered: String?

  private enum CodingKeys: String, CodingKey {
    case store, time, outcome, durationNanoseconds, sequence, holds, cancelledBy, dispatch, state, stateMirror
    case swift, swiftError, stateType, stateForm, steered
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    store = try container.decode(String.self, forKey: .store)
    time = try container.decode(String.self, forKey: .time)
    outcome = try container.decode(ActionOutcome.self, forKey: .outcome)
    do {
      durationNanoseconds = try container.decodeIfPresent(UInt64.self, forKey: .durationNanoseconds)
    } catch let error where !(error is DecodingError) {
      // A number that does not fit: the decoder's own error, which it tells as a line that is not
      // JSON, without the key.
      throw DecodingError.dataCorruptedError(
        forKey: .durationNanoseconds, in: container,
        debugDescription: "not a whole number from 0 to \(UInt64.max)")
    }
    sequence = try Self.wholeNumber(in: container, forKey: .sequence)
    holds = try container.decodeIfPresent([HoldField].self, forKey: .holds) ?? []
    cancelledBy = try container.decodeIfPresent(String.self, forKey: .cancelledBy)
    dispatch = try container.decodeIfPresent(String.self, forKey: .dispatch)
    hasState = container.contains(.state)
    hasStateMirror = container.contains(.stateMirror)
    swift = try container.decodeIfPresent(String.self, forKey: .swift)
    swiftError = try container.decodeIfPresent(String.self, forKey: .swiftError)
    stateType = try container.decodeIfPresent(String.self, forKey: .stateType)
    stateForm = try container.decodeIfPresent(String.self, forKey: .stateForm)
    steered = try container.decodeIfPresent(String.self, forKey: .steered)
  }

  /// The whole number at `key`, if there is one, with a message that names the key when it does
  /// not fit.
  private static func wholeNumber(
    in container: KeyedDecodingContainer<CodingKeys>, forKey key: CodingKeys
  ) throws -> UInt64? {
    do {
      return try container.decodeIfPresent(UInt64.self, forKey: key)
    } catch let error where !(error is DecodingError) {
      throw DecodingError.dataCorruptedError(
        forKey: key, in: container, debugDescription: "not a whole number from 0 to \(UInt64.max)")
    }
  }
}

/// The message of an error line, as read back.
struct ErrorLineBody: Decodable {
  let error: String
}

/// The state of a line that has one (a `state` key), decoded as `Snapshot`.
///
/// The key says whether a state was recorded; its value is the snapshot, whatever it is. So
/// `"state":null` is the snapshot `nil` of an optional type, and a type error for any other type;
/// a line without the key has no state (``ActionLogHeader/hasState``) and is never decoded here.
struct ActionLogStateBody<Snapshot: Decodable>: Decodable {
  let state: Snapshot

  private enum CodingKeys: String, CodingKey {
    case state
  }

  init(from decoder: any Decoder) throws {
    // `decode`, not `decodeIfPresent`: the latter reads `null` as "no value" for every type,
    // the nil of an optional snapshot included.
    state = try decoder.container(keyedBy: CodingKeys.self).decode(Snapshot.self, forKey: .state)
  }
}

/// The action of a line, decoded as `Action`.
struct ActionLogBody<Action: Decodable>: Decodable {
  let action: Action
}

/// The instants of an action log: ISO 8601, in UTC, with milliseconds.
enum LogTime {
  /// Writes `date` as `yyyy-MM-ddTHH:mm:ss.SSSZ`, in UTC, to the nearest millisecond (half of one
  /// rounds up), in the proleptic Gregorian calendar: as the date formatter wrote it, and read
  /// back by ``date(from:)`` as the same millisecond. An instant outside the years 0000 to 9999,
  /// which four digits of year cannot hold (a clock gone wrong), is written as the first or the
  /// last millisecond of those years, so that the line still reads.
  ///
  /// Written here, not by a date formatter: making one took about 75 µs, on every line, and one
  /// formatter kept for all lines would need a lock (it is not `Sendable`).
  static func string(from date: Date) -> String {
    // Rounded, not cut: a `Double` may hold an instant of whole milliseconds a hair below it, and
    // after 2242 by more than a microsecond.
    let nearest = (date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down)
    // Not-a-number compares false, and so is the first millisecond too.
    let milliseconds =
      nearest >= Double(firstMillisecond)
      ? (nearest <= Double(lastMillisecond) ? Int(nearest) : lastMillisecond) : firstMillisecond
    let days = floorDivision(milliseconds, 86_400_000)
    let ofDay = milliseconds - days * 86_400_000
    let (year, month, day) = civilDate(daysSince1970: days)
    return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T"
      + padded(ofDay / 3_600_000, 2) + ":" + padded(ofDay / 60_000 % 60, 2) + ":"
      + padded(ofDay / 1000 % 60, 2) + "." + padded(ofDay % 1000, 3) + "Z"
  }

  /// The first millisecond of the year 0000, from 1970: the earliest time written.
  static let firstMillisecond = daysSince1970(year: 0, month: 1, day: 1) * 86_400_000

  /// The last millisecond of the year 9999, from 1970: the latest time written.
  static let lastMillisecond = daysSince1970(year: 10_000, month: 1, day: 1) * 86_400_000 - 1

  /// `value / divisor`, rounded down (toward minus infinity), for a positive `divisor`.
  private static func floorDivision(_ value: Int, _ divisor: Int) -> Int {
    value >= 0 ? value / divisor : (value + 1) / divisor - 1
  }

  /// `value` in decimal, with zeros before it up to `width` digits.
  private static func padded(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// The day of the proleptic Gregorian calendar that is `days` days from 1970-01-01: the
  /// inverse of ``daysSince1970(year:month:day:)``.
  static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
    // Years that begin in March, so that the leap day is the last day of its year.
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Reads a time as ``string(from:)`` writes it: `yyyy-MM-ddTHH:mm:ss.SSSZ`, with one or more
  /// digits of the second's fraction, and `Z` or an offset `+hh:mm` or `-hh:mm`. `nil` for
  /// anything else, a day that its month does not have or a time of day past 23:59:59 included.
  ///
  /// Read here, not by a date formatter: the formatter rolls a day that its month does not have
  /// over into the next month, ignores what follows the time, reads a fraction of ten digits or
  /// more as another instant, and stops the process on one of 35 digits or more.
  static func date(from string: String) -> Date? {
    var rest = Substring(string).utf8
    func digits(_ count: Int) -> Int? {
      guard rest.count >= count, rest.prefix(count).allSatisfy(isDigit) else { return nil }
      defer { rest = rest.dropFirst(count) }
      return rest.prefix(count).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
    func skip(_ character: Unicode.Scalar) -> Bool {
      guard rest.first == UInt8(ascii: character) else { return false }
      rest = rest.dropFirst()
      return true
    }
    guard let year = digits(4), skip("-"), let month = digits(2), skip("-"), let day = digits(2), skip("T"),
      let hour = digits(2), skip(":"), let minute = digits(2), skip(":"), let second = digits(2), skip(".")
    else { return nil }
    let fraction = rest.prefix(while: isDigit)
    guard !fraction.isEmpty else { return nil }
    rest = rest.dropFirst(fraction.count)
    // Nine digits are nanoseconds, finer than a `Date` holds this century.
    let nanoseconds = fraction.prefix(9).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    let scale = (fraction.prefix(9).count..<9).reduce(1) { scale, _ in scale * 10 }
    var offset = 0
    if !skip("Z") {
      let sign = skip("+") ? 1 : skip("-") ? -1 : 0
      guard sign != 0, let hours = digits(2), skip(":"), let minutes = digits(2), hours < 24, minutes < 60
      else { return nil }
      offset = sign * (hours * 3600 + minutes * 60)
    }
    guard rest.isEmpty, (1...12).contains(month), (1...daysIn(month, of: year)).contains(day), hour < 24,
      minute < 60, second < 60
    else { return nil }
    let seconds =
      daysSince1970(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second - offset
    return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds * scale) / 1e9)
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  private static func daysIn(_ month: Int, of year: Int) -> Int {
    switch month {
    case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar.
  static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
    // Years that begin in March, so that the leap day is the last day of its year.
    let year = month <= 2 ? year - 1 : year
    let era = (year >= 0 ? year : year - 399) / 400
    let yearOfEra = year - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
