/// What is wrong with an action log, and on which line.
///
/// ```swift
/// do {
///   let recording = try Recording(contentsOf: url)
/// } catch {
///   print(error)  // line 7: the line is cut short: the log ends in the middle of it
/// }
/// ```
public struct RecordingError: Error, Sendable, CustomStringConvertible {
  /// The line of the log that is wrong, counted from 1; `nil` when the log as a whole is.
  public let line: Int?
  /// What is wrong, in words for a person.
  public let message: String

  /// Creates an error about `line`, or about the whole log.
  ///
  /// - Parameters:
  ///   - line: The line, counted from 1, or `nil`.
  ///   - message: What is wrong.
  public init(line: Int?, _ message: String) {
    self.line = line
    self.message = message
  }

  /// The message, after the line number when there is one.
  public var description: String {
    line.map { "line \($0): \(message)" } ?? message
  }
}

extension RecordingError {
  /// A short account of a decoding error: what is missing or wrong, and where.
  static func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    // `holds[0].nanoseconds`: an element of an array by its index, as JSON paths write it.
    func path(_ keys: [any CodingKey]) -> String {
      guard !keys.isEmpty else { return "the line" }
      var text = ""
      for key in keys {
        if let index = key.intValue, key.stringValue == "Index \(index)" {
          text += "[\(index)]"
        } else {
          text += (text.isEmpty ? "" : ".") + key.stringValue
        }
      }
      return "\"" + text + "\""
    }
    switch error {
    case .keyNotFound(let key, let context):
      return "\(path(context.codingPath + [key])) is missing"
    case .valueNotFound(_, let context):
      return "\(path(context.codingPath)) is null"
    case .typeMismatch(let type, let context):
      return "\(path(context.codingPath)) is not \(kind(of: type))"
    case .dataCorrupted(let context):
      guard !context.codingPath.isEmpty else { return "not JSON" }
      // Foundation's words for a string that is none of an enum's raw values name the enum.
      if context.debugDescription.hasPrefix("Cannot initialize") {
        return "\(path(context.codingPath)) is none of the values the log writes there"
      }
      return "\(path(context.codingPath)): \(context.debugDescription)"
    @unknown default:
      return "\(error)"
    }
  }

  /// The kind of JSON value that a decoder expected where it found another, in words: never the
  /// Swift type that reads it (`Dictionary<String, Any>` is an object to whoever reads the log).
  private static func kind(of type: Any.Type) -> String {
    switch type {
    case is String.Type, is Substring.Type: "a string"
    case is Bool.Type: "true or false"
    case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type, is UInt.Type, is UInt64.Type,
      is UInt32.Type, is UInt16.Type, is UInt8.Type:
      "a whole number"
    case is Double.Type, is Float.Type: "a number"
    case is [Any].Type: "an array"
    case is [String: Any].Type: "an object"
    default: "what the log writes there"
    }
  }
}
