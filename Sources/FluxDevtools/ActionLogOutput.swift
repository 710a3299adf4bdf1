import FluxCore
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
  /// The file of a ``file(_:onFailure:)`` output; `nil` for the others.
  private let file: LogFile?

  /// Creates an output that hands each line to `write`.
  ///
  /// - Parameter write: Receives each line, its line break included.
  public init(_ write: @escaping @Sendable (String) -> Void) {
    self.body = write
    self.file = nil
  }

  private init(file: LogFile) {
    self.body = { line in file.write(line) }
    self.file = file
  }

  /// Writes one line, its line break included.
  ///
  /// - Parameter line: A JSON object and a line break.
  public func write(_ line: String) {
    body(line)
  }

  /// An output that writes a new log at the file at `url`, one line at a time, as they come.
  ///
  /// The log lives at its own path from the start: each line is appended to `url` whole, in one
  /// system call, so a reader (`tail -f`, the Flux Inspector) sees it as it grows, and a crash
  /// or a kill leaves every line written before it at `url` (a line being written at that
  /// moment may be cut short; ``Recording/init(contentsOf:allowingCutShortLastLine:)`` reads the
  /// lines before it). ``ActionLog/flush()`` is all a reader needs to wait for; ``finish()``
  /// writes the file to the disk and closes it.
  ///
  /// What was at `url` before is kept beside it, never overwritten, never removed: the file
  /// (or symbolic link) is renamed `url.1`, or `url.2` if that name is taken, and so on, the
  /// first free number (``previousFile``). So a session may replay a log and record to the
  /// same file: the replay reads the old log, now at `url.1`, and the new one grows at `url`.
  ///
  /// One writer at a time: while an output holds the file (until ``finish()``, ``discard()``,
  /// or the end of the process), a second `file(_:)` for the same path, in this process or
  /// another, throws "another action log is writing to it", and moves nothing. The hold is an
  /// exclusive `flock` on the file, which the system gives back when the process ends, however
  /// it ends: a crashed writer never keeps the next one out. (A child process forked while the
  /// file is open shares the hold until it executes its program, which closes the file for it,
  /// or ends.)
  ///
  /// A write that fails (the disk is full, the file passes the process's size limit) is
  /// reported, never dropped in silence: `onFailure` receives it, once, on the thread that
  /// wrote; ``failure`` holds it; and ``finish()`` throws it. The part of the line that was
  /// written is removed, and no line is written after it: the file holds every line before
  /// the failure, whole. No failure removes a line that was written.
  ///
  /// ```swift
  /// let output = try ActionLogOutput.file(URL(fileURLWithPath: "session.jsonl")) { failure in
  ///   print("the log stopped: \(failure)")
  /// }
  /// let log = ActionLog(output: output)
  /// // … stores write to the log; session.jsonl grows …
  /// try log.finish()  // every line is on the disk
  /// ```
  ///
  /// - Parameters:
  ///   - url: The file to write. Its folder must exist; a folder at `url` is an error.
  ///   - onFailure: Receives the first write that failed.
  /// - Returns: The output.
  /// - Throws: A ``FileError`` when the file cannot be made: a folder at `url` or missing
  ///   where its folder should be, another writer on the same path, no permission.
  public static func file(
    _ url: URL, onFailure: @escaping @Sendable (FileError) -> Void = { _ in }
  ) throws(FileError) -> ActionLogOutput {
    do {
      return ActionLogOutput(file: LogFile(try AppendingFile(at: url), onFailure: onFailure))
    } catch {
      throw FileError(error)
    }
  }

  /// The first write to the file that failed, if one did, or a line that came after
  /// ``finish()``; always `nil` for an output that is not a file.
  public var failure: FileError? {
    file?.failure
  }

  /// The path of a ``file(_:onFailure:)`` output; `nil` for the others.
  var filePath: String? {
    file?.path
  }

  /// Where the file that was at the URL of a ``file(_:onFailure:)`` output when it opened is
  /// kept: beside it, as `NAME.1` (or the first free number after it); `nil` when nothing was
  /// there, and for the other outputs.
  public var previousFile: URL? {
    file?.previous.map { URL(fileURLWithPath: $0) }
  }

  /// Writes the file of a ``file(_:onFailure:)`` output to the disk and closes it, which lets
  /// another writer open its path; does nothing for the other outputs.
  ///
  /// Call it once every line is written (``ActionLog/finish()`` flushes the log, then calls
  /// it). Lines that come after it are not written, and are reported (``failure``).
  ///
  /// Every call has one outcome, the first one's: a second call returns, or throws the same
  /// error, again. Calls made at once from several threads all wait until the file is closed.
  ///
  /// - Throws: The first write that failed (the lines before it are in the file, whole); or
  ///   why the lines may not all be on the disk, or are no longer at the path (another
  ///   program moved or removed the file).
  public func finish() throws(FileError) {
    try file?.finish()
  }

  /// Removes the file of a ``file(_:onFailure:)`` output, with the lines it holds, and puts
  /// back at its URL the file that was there when the output opened (``previousFile``); does
  /// nothing for the other outputs.
  ///
  /// For a log you decide not to keep: a session that failed before it began, say. It leaves
  /// everything as it is if another program has moved the new file or the old one meanwhile.
  /// Lines that come after it are not written, and are reported (``failure``).
  public func discard() {
    file?.discard()
  }

  /// An output that writes to standard error.
  public static var standardError: ActionLogOutput {
    ActionLogOutput { line in FileHandle.standardError.write(Data(line.utf8)) }
  }
}

extension ActionLogOutput {
  /// A file of an action log that could not be opened, written or closed: its path and the
  /// cause in words.
  ///
  /// ```swift
  /// print(failure)  // cannot write session.jsonl: the disk is full
  /// ```
  public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file that was to be written.
    public let path: String
    /// Why it could not be, in words: "the disk is full", "is a folder", "does not exist",
    /// "another action log is writing to it".
    public let cause: String

    init(_ failure: FileFailure) {
      self.path = failure.path
      self.cause = failure.cause
    }

    /// `cannot write PATH: CAUSE`.
    public var description: String {
      "cannot write \(path): \(cause)"
    }
  }
}
