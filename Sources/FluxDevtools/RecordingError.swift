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
      return "\(path(context.codingPath)) is not a \(type)"
    case .dataCorrupted(let context):
      return context.codingPath.isEmpty
        ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
    @unknown default:
      return "\(error)"
    }
  }
}
