/// Why the inspector cannot do what it was asked, in one line of words for a person.
///
/// ```swift
/// do {
///   _ = try LogFile.read(path: "missing.jsonl")
/// } catch {
///   print(error)  // no log at missing.jsonl: no such file
/// }
/// ```
public struct InspectorError: Error, Sendable, CustomStringConvertible, Equatable {
  /// What went wrong, one line, without a trailing period.
  public let message: String

  /// Creates an error that says `message`.
  ///
  /// - Parameter message: One line, in words.
  public init(_ message: String) {
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
