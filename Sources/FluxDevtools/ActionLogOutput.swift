import Foundation

/// Where an ``ActionLog`` writes its lines: a file, standard error, or a function of yours.
///
/// ```swift
/// let toFile = try ActionLogOutput.file(URL(fileURLWithPath: "session.jsonl"))
/// let toMemory = ActionLogOutput { line in lines.withLock { $0.append(line) } }
/// ```
///
/// > Important: The ``ActionLog`` calls ``write(_:)`` for one line at a time, never for two at
/// > once, in the order the actions ended; possibly on several threads (each store's executor,
/// > and the log's own queue), and with none of its locks held.
public struct ActionLogOutput: Sendable {
  private let body: @Sendable (String) -> Void

  /// Creates an output that hands each line to `write`.
  ///
  /// - Parameter write: Receives each line, its line break included.
  public init(_ write: @escaping @Sendable (String) -> Void) {
    self.body = write
  }

  /// Writes one line, its line break included.
  ///
  /// - Parameter line: A JSON object and a line break.
  public func write(_ line: String) {
    body(line)
  }

  /// An output that writes to the file at `url`, creating it or emptying it first.
  ///
  /// Each line is written with one system call, as it comes, so that what a program wrote before
  /// it stopped is in the file.
  ///
  /// - Parameter url: The file to write.
  /// - Returns: The output.
  /// - Throws: The error of creating or opening the file.
  public static func file(_ url: URL) throws -> ActionLogOutput {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
    let handle = try FileHandle(forWritingTo: url)
    return ActionLogOutput { line in
      if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
        try? handle.write(contentsOf: Data(line.utf8))
      } else {
        handle.write(Data(line.utf8))
      }
    }
  }

  /// An output that writes to standard error.
  public static var standardError: ActionLogOutput {
    ActionLogOutput { line in FileHandle.standardError.write(Data(line.utf8)) }
  }
}
