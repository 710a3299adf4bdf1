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

  /// An output that writes a new log to the file at `url`, aside, and puts it in place when
  /// you finish it.
  ///
  /// The lines go to a file beside `url`, named after it (`session.jsonl.partial-…`), one
  /// system call per line, as they come. ``finish()`` (or ``ActionLog/finish()``) renames that
  /// file to `url`: until then, a file already at `url` keeps its old content, so a log can be
  /// recorded to the file that a replay reads, and a crash leaves the old log whole and the
  /// new one, up to the crash, beside it.
  ///
  /// A write that fails (the disk is full, the file passes the process's size limit) is
  /// reported, never dropped in silence: `onFailure` receives it, once, on the thread that
  /// wrote; ``failure`` holds it; and ``finish()`` throws it. No line is written after it, so
  /// the aside file holds every line before the failure, the last one perhaps cut short, and
  /// stays where it is: ``Recording/init(contentsOf:allowingCutShortLastLine:)`` reads it.
  ///
  /// ```swift
  /// let output = try ActionLogOutput.file(URL(fileURLWithPath: "session.jsonl")) { failure in
  ///   print("the log stopped: \(failure)")
  /// }
  /// let log = ActionLog(output: output)
  /// // … stores write to the log …
  /// try log.finish()  // session.jsonl now holds the new log
  /// ```
  ///
  /// - Parameters:
  ///   - url: The file to write. Its folder must exist; a folder at `url` is an error.
  ///   - onFailure: Receives the first write that failed.
  /// - Returns: The output.
  /// - Throws: A ``FileError`` when the aside file cannot be made.
  public static func file(
    _ url: URL, onFailure: @escaping @Sendable (FileError) -> Void = { _ in }
  ) throws(FileError) -> ActionLogOutput {
    do {
      return ActionLogOutput(file: LogFile(try AsideFile(replacing: url), onFailure: onFailure))
    } catch {
      throw FileError(error)
    }
  }

  /// The first write to the file that failed, if one did; always `nil` for an output that is
  /// not a file.
  public var failure: FileError? {
    file?.failure
  }

  /// Puts the file of a ``file(_:onFailure:)`` output in place; does nothing for the others.
  ///
  /// Call it once every line is written (``ActionLog/finish()`` flushes the log, then calls
  /// it). Lines that come after it are not written.
  ///
  /// - Throws: The first write that failed, and then the file is left aside and the one at
  ///   its URL keeps its old content; or the failure to put it in place.
  public func finish() throws(FileError) {
    try file?.finish()
  }

  /// Removes the aside file of a ``file(_:onFailure:)`` output, unfinished, and leaves the file
  /// at its URL as it was; does nothing for the other outputs.
  ///
  /// For a log you decide not to keep: a session that failed before it began, say. Lines that
  /// come after it are not written.
  public func discard() {
    file?.discard()
  }

  /// An output that writes to standard error.
  public static var standardError: ActionLogOutput {
    ActionLogOutput { line in FileHandle.standardError.write(Data(line.utf8)) }
  }
}

extension ActionLogOutput {
  /// A file of an action log that could not be written or put in place: its path and the
  /// cause in words.
  ///
  /// ```swift
  /// print(failure)  // cannot write session.jsonl: the disk is full
  /// ```
  public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file that was to be written.
    public let path: String
    /// Why it could not be, in words: "the disk is full", "is a folder", "does not exist".
    public let cause: String
    /// Where the lines written before the failure are, when they were kept.
    public let keptAt: String?

    init(_ failure: FileFailure, keptAt: String? = nil) {
      self.path = failure.path
      self.cause = failure.cause
      self.keptAt = keptAt
    }

    /// `cannot write PATH: CAUSE`, and where the lines written before it are.
    public var description: String {
      "cannot write \(path): \(cause)" + (keptAt.map { "; the lines written before it are in \($0)" } ?? "")
    }
  }
}

/// The aside file of a log, behind a lock: the log writes one line at a time, but a reader of
/// ``ActionLogOutput/failure`` or a call of ``ActionLogOutput/finish()`` may come from any
/// thread.
// `@unchecked Sendable`: its variables are read and written only under `lock`; the rest is
// constant.
private final class LogFile: @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`: the file until it is finished or has failed, whether it was finished,
  // and the first failure.
  private var aside: AsideFile?
  private var isFinished = false
  private var firstFailure: ActionLogOutput.FileError?
  private let onFailure: @Sendable (ActionLogOutput.FileError) -> Void
  private let path: String

  init(_ aside: AsideFile, onFailure: @escaping @Sendable (ActionLogOutput.FileError) -> Void) {
    self.aside = aside
    self.path = aside.destination.path
    self.onFailure = onFailure
  }

  deinit {
    // A log dropped before it was finished keeps its lines where they are.
    aside?.abandon()
  }

  var failure: ActionLogOutput.FileError? {
    lock.withLock { firstFailure }
  }

  func write(_ line: String) {
    let failure = lock.withLock { () -> ActionLogOutput.FileError? in
      guard let file = aside else {
        guard isFinished, firstFailure == nil else { return nil }
        firstFailure = ActionLogOutput.FileError(
          FileFailure(path: path, cause: "a line came after the log was finished; it is not written"))
        return firstFailure
      }
      do throws(FileFailure) {
        try file.write(line.utf8, keepingOnFailure: true)
        return nil
      } catch {
        aside = nil
        firstFailure = ActionLogOutput.FileError(error, keptAt: file.asidePath)
        return firstFailure
      }
    }
    if let failure { onFailure(failure) }
  }

  func discard() {
    let file = lock.withLock {
      defer {
        aside = nil
        isFinished = true
      }
      return aside
    }
    file?.discard()
  }

  func finish() throws(ActionLogOutput.FileError) {
    let (file, failure) = lock.withLock {
      defer {
        aside = nil
        isFinished = true
      }
      return (aside, firstFailure)
    }
    if let failure { throw failure }
    do {
      try file?.commit()
    } catch {
      throw ActionLogOutput.FileError(error)
    }
  }
}
