import Foundation

/// An action log read back: every line of it, checked, in order.
///
/// ```swift
/// let recording = try Recording(contentsOf: URL(fileURLWithPath: "session.jsonl"))
/// for entry in recording.entries {
///   print(entry.store, entry.outcome, try entry.action(as: CounterAction.self))
/// }
/// ```
///
/// Reading checks every line before it returns, so a bad or cut-short log throws a
/// ``RecordingError`` that names the line, and nothing else happens. Blank lines are skipped;
/// lines may end in `\n` or `\r\n`. A line nests arrays and objects at most 512 deep, as deep as
/// the JSON decoder reads.
public struct Recording: Sendable {
  /// One line of the log: one action that a store committed or a middleware cancelled.
  public struct Entry: Sendable {
    /// The line of the log, counted from 1.
    public let line: Int
    /// The label of the store, as given to ``ActionLog/middleware(label:for:)``.
    public let store: String
    /// When the action ended: read from an ISO 8601 time with a fraction of a second, in UTC
    /// (`2026-11-23T03:07:49.123Z`) or with an offset (`+05:30`); any other time is an error.
    public let time: Date
    /// Whether the action was committed or cancelled.
    public let outcome: ActionOutcome
    /// How long the commit took, with the hooks that ran between the log middleware's own; `nil`
    /// for a cancelled action.
    public let durationNanoseconds: UInt64?
    /// The line itself, to decode the action from.
    let json: Data
    /// The line's number in the log, from 1 (`sequence`), if the log wrote it.
    public let sequence: UInt64?
    /// Each middleware that held the action (had not decided when its `intercept` returned),
    /// in order, and for how long (`holds`); empty when none did, or the log did not write it.
    public let holds: [Hold]
    /// The type name of the middleware that cancelled the action (`cancelledBy`), if the log
    /// wrote it.
    public let cancelledBy: String?
    /// The global dispatch the action came from (`dispatch`): the same on every line of one
    /// global dispatch; `nil` for a dispatch to one store, or if the log did not write it.
    public let dispatch: String?
    /// Whether the line holds the state after the commit (`state`): read it with
    /// ``state(as:)``.
    public let hasState: Bool
    /// Whether the line holds the state after the commit as `Mirror` showed it (`stateMirror`,
    /// ``StateSnapshots/mirror``): a state to look at, which ``state(as:)`` refuses, as no
    /// snapshot type reads it back.
    public let hasStateMirror: Bool
    /// The fields of ``ActionLog/Fields/swift``, if the log wrote them: the action as Swift, or
    /// why it could not be written so; the state type; how the state was taken.
    let swift: String?
    let swiftError: String?
    let stateType: String?
    let stateForm: String?
    /// What the Inspector did to the app to cause this commit (`"jump"`, `"dispatch"`…), for a
    /// line of a live session; `nil` for a commit of the app's own.
    let steered: String?

    /// Decodes the action, as the store's action type.
    ///
    /// Where the type reads a `Double` or a `Float`, the strings `"Infinity"`, `"-Infinity"` and
    /// `"NaN"` read as those values, as ``ActionLog`` writes them.
    ///
    /// - Parameter type: The action type of the store; usually inferred.
    /// - Returns: The action.
    /// - Throws: A ``RecordingError`` naming the line when the action is not one of `type`.
    public func action<Action: Decodable>(as type: Action.Type = Action.self) throws(RecordingError) -> Action {
      do {
        let decoder = JSONDecoder()
        // As the log writes them: see ``ActionLogLine/encoded()``.
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
          positiveInfinity: NonFiniteNumbers.positiveInfinity, negativeInfinity: NonFiniteNumbers.negativeInfinity,
          nan: NonFiniteNumbers.nan)
        return try decoder.decode(ActionLogBody<Action>.self, from: json).action
      } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
        // The decoder reads numbers and strings only when asked for them, and tells one that it
        // cannot read, a number too large for its type included, as a line that is not JSON.
        let cause = "a number or a string in it cannot be read: too large for its type, or not JSON"
        throw RecordingError(line: line, "the action is not a \(Action.self) (\(cause))")
      } catch DecodingError.typeMismatch(let type, let context) {
        // A synthesized enum tells a key that is none of its cases as a type mismatch.
        if let key = Self.onlyKey(in: json, at: context.codingPath) {
          throw RecordingError(line: line, "the action is not a \(Action.self) (no case `\(key)` in \(type))")
        }
        throw RecordingError(
          line: line,
          "the action is not a \(Action.self) (\(RecordingError.describe(DecodingError.typeMismatch(type, context))))")
      } catch {
        throw RecordingError(
          line: line, "the action is not a \(Action.self) (\(RecordingError.describe(error)))")
      }
    }
  }

  /// The actions of the log, in the order they ended.
  public let entries: [Entry]

  /// The last line of the log, counted from 1, when it was cut short and left out; `nil` when
  /// every line was whole.
  ///
  /// Only a recording read with `allowingCutShortLastLine` leaves a line out: a log that a
  /// process stopped writing in the middle of a line, because it was killed or its disk was full.
  public let cutShortLine: Int?

  /// Reads the action log in `text`.
  ///
  /// - Parameters:
  ///   - text: JSON Lines, as an ``ActionLog`` writes them.
  ///   - allowingCutShortLastLine: Whether a last line cut short is left out (and its number
  ///     kept in ``cutShortLine``) rather than an error; every line before it is read.
  /// - Throws: A ``RecordingError`` naming the first bad line.
  public init(jsonLines text: String, allowingCutShortLastLine: Bool = false) throws(RecordingError) {
    try self.init(bytes: text.utf8, allowingCutShortLastLine: allowingCutShortLastLine)
  }

  /// Reads the action log in `bytes`, line by line.
  ///
  /// Split on the bytes, not the characters: "\r\n" is one `Character`, and a log whose lines
  /// end in it (written on Windows, or checked out with automatic line ends) is still a log. Nor
  /// is the whole log decoded as text first: a log cut short in the middle of a multi-byte
  /// character is a log cut short in the middle of its last line, not a file that is not text.
  /// A UTF-8 byte order mark at the start is not part of the first line (an editor that saves
  /// a log as "UTF-8 with BOM" writes one; a log of only that mark is an empty log), as when the
  /// whole log was decoded as text.
  private init<Bytes: BidirectionalCollection<UInt8>>(bytes: Bytes, allowingCutShortLastLine: Bool)
    throws(RecordingError)
  {
    var entries: [Entry] = []
    var cutShortLine: Int?
    let bytes = bytes.starts(with: Self.byteOrderMark) ? bytes.dropFirst(Self.byteOrderMark.count) : bytes[...]
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for (index, line) in lines.enumerated() {
      let content = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
      guard !content.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") })
      else { continue }
      let isLast = index == lines.count - 1
      do {
        entries.append(try Self.entry(Data(content), number: index + 1, isCutShort: isLast))
      } catch  where allowingCutShortLastLine && isLast && error.message == Self.cutShortMessage {
        cutShortLine = index + 1
      }
    }
    self.entries = entries
    self.cutShortLine = cutShortLine
  }

  /// Reads the action log in the file at `url`.
  ///
  /// ```swift
  /// // What a process wrote before it was killed, but for the line it was writing:
  /// let partial = try Recording(contentsOf: url, allowingCutShortLastLine: true)
  /// ```
  ///
  /// - Parameters:
  ///   - url: A file that an ``ActionLog`` wrote.
  ///   - allowingCutShortLastLine: Whether a last line cut short is left out (and its number
  ///     kept in ``cutShortLine``) rather than an error; every line before it is read.
  /// - Throws: A ``RecordingError`` when the file cannot be read (it names the path and the
  ///   cause: "does not exist", "is a folder", "permission denied"), or naming its first bad line.
  public init(contentsOf url: URL, allowingCutShortLastLine: Bool = false) throws(RecordingError) {
    let bytes: [UInt8]
    do {
      bytes = try FileBytes.read(url)
    } catch {
      throw RecordingError(line: nil, "cannot read \(error.path): \(error.cause)")
    }
    try self.init(bytes: bytes, allowingCutShortLastLine: allowingCutShortLastLine)
  }

  private static func entry(_ json: Data, number: Int, isCutShort: Bool) throws(RecordingError) -> Entry {
    let nesting = Nesting(json)
    // The JSON decoder reads no deeper, and stops the process on a line whose last byte opens the
    // array one level too deep.
    guard nesting.deepest <= Nesting.limit else {
      throw RecordingError(line: number, "the line nests arrays and objects more than \(Nesting.limit) deep")
    }
    if let offset = FileBytes.firstNonUTF8Offset(json), !(isCutShort && nesting.isOpenAtEnd && isUTF8CutShort(json)) {
      throw RecordingError(line: number, "the line is not UTF-8 at byte \(offset + 1)")
    }
    let header: ActionLogHeader
    do {
      header = try JSONDecoder().decode(ActionLogHeader.self, from: json)
    } catch {
      if let failure = try? JSONDecoder().decode(ErrorLineBody.self, from: json).error {
        throw RecordingError(line: number, "the log has an error here: \(failure)")
      }
      if isCutShort, nesting.isOpenAtEnd, isUTF8CutShort(json) {
        throw RecordingError(line: number, cutShortMessage)
      }
      throw RecordingError(line: number, "not an action of the log (\(RecordingError.describe(error)))")
    }
    guard let time = LogTime.date(from: header.time) else {
      throw RecordingError(line: number, "\"time\" is not an ISO 8601 time: \(header.time)")
    }
    guard (try? JSONDecoder().decode(ActionLogBody<IgnoredValue>.self, from: json)) != nil else {
      throw RecordingError(line: number, "\"action\" is missing")
    }
    return Entry(
      line: number, store: header.store, time: time, outcome: header.outcome,
      durationNanoseconds: header.durationNanoseconds, json: json, sequence: header.sequence,
      holds: header.holds.map { Entry.Hold(middleware: $0.middleware, nanoseconds: $0.nanoseconds) },
      cancelledBy: header.cancelledBy, dispatch: header.dispatch, hasState: header.hasState,
      hasStateMirror: header.hasStateMirror, swift: header.swift,
      swiftError: header.swiftError, stateType: header.stateType, stateForm: header.stateForm, steered: header.steered)
  }
}

extension Recording {
  private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
  private static let cutShortMessage = "the line is cut short: the log ends in the middle of it"

  /// Whether `bytes` are UTF-8 text, but for at most the start of one multi-byte character at
  /// their end: a line cut short there, not a line with a bad byte in it.
  private static func isUTF8CutShort(_ bytes: Data) -> Bool {
    if String(data: bytes, encoding: .utf8) != nil { return true }
    let tail = Array(bytes.suffix(3))
    for start in tail.indices {
      let lead = tail[start]
      let length =
        switch lead {
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: 0
        }
      let cut = tail[start...]
      guard length > cut.count, cut.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }) else { continue }
      return String(data: bytes.dropLast(cut.count), encoding: .utf8) != nil
    }
    return false
  }
}

/// How deep a line nests its arrays and objects, and whether it ends inside one of them or inside
/// a string, as a line cut short does: brackets and braces counted outside strings.
struct Nesting {
  /// The deepest nesting the JSON decoder reads.
  static let limit = 512

  private(set) var deepest = 0
  private(set) var isOpenAtEnd = false

  init(_ bytes: Data) {
    var depth = 0
    var isInString = false
    var isEscaped = false
    for byte in bytes {
      if isInString {
        if isEscaped {
          isEscaped = false
        } else if byte == UInt8(ascii: "\\") {
          isEscaped = true
        } else if byte == UInt8(ascii: "\"") {
          isInString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): isInString = true
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        depth += 1
        deepest = max(deepest, depth)
      case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
      default: break
      }
    }
    isOpenAtEnd = isInString || depth > 0
  }
}

extension Recording.Entry {
  /// The key of the one-key object at `path` in `json`, if the value there is one: how a
  /// synthesized `Codable` enum writes a case.
  static func onlyKey(in json: Data, at path: [any CodingKey]) -> String? {
    var value = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
    for key in path {
      if let index = key.intValue, let array = value as? [Any] {
        value = array.indices.contains(index) ? array[index] : nil
      } else {
        value = (value as? [String: Any])?[key.stringValue]
      }
    }
    guard let object = value as? [String: Any], object.count == 1 else { return nil }
    return object.keys.first
  }
}

/// Any JSON value, not looked at.
private struct IgnoredValue: Decodable {
  init(from decoder: any Decoder) throws {}
}
