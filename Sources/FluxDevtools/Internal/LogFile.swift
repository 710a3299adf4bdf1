import Dispatch
import FluxCore

/// The file of a log's file output, behind a lock: the log writes one line at a time, but a
/// reader of ``ActionLogOutput/failure`` or a call of ``ActionLogOutput/finish()`` may come from
/// any thread, several at once.
///
/// It is open, then closed once: by the first ``finish()``, whose outcome every later call
/// returns too (calls that come while it closes wait for it), or by ``discard()``. After the
/// first failed write, no line is written, but the file stays open, and held, until then.
// `@unchecked Sendable`: its variables are read and written only under `lock`; the rest is
// constant.
final class LogFile: @unchecked Sendable {
  private typealias FileError = ActionLogOutput.FileError

  private let lock = Lock()
  // Guarded by `lock`: the file until it is closed; whether it is (finished or discarded); the
  // first failure; the first finish() while it closes the file, and then its outcome.
  private var file: AppendingFile?
  private var isClosed = false
  private var firstFailure: FileError?
  private var finishing: DispatchGroup?
  private var outcome: Result<Void, FileError>?

  private let onFailure: @Sendable (FileError) -> Void
  let path: String
  /// Where the file that was at the path before is kept, if there was one.
  let previous: String?

  init(_ file: AppendingFile, onFailure: @escaping @Sendable (ActionLogOutput.FileError) -> Void) {
    self.file = file
    self.path = file.path
    self.previous = file.previous
    self.onFailure = onFailure
  }

  var failure: ActionLogOutput.FileError? {
    lock.withLock { firstFailure }
  }

  /// Appends `line`, unless a write failed before, or the file is closed (which is reported
  /// once, as a failure). Under the lock, so that ``finish()`` never closes the file in the
  /// middle of a line.
  func write(_ line: String) {
    let failure = lock.withLock { () -> FileError? in
      guard !isClosed else {
        guard firstFailure == nil else { return nil }
        firstFailure = FileError(
          FileFailure(path: path, cause: "a line came after the log was finished; it is not written"))
        return firstFailure
      }
      guard firstFailure == nil, let file else { return nil }
      do throws(FileFailure) {
        try file.write(Array(line.utf8))
        return nil
      } catch {
        firstFailure = FileError(error)
        return firstFailure
      }
    }
    if let failure { onFailure(failure) }
  }

  /// What a call of ``finish()`` does.
  private enum Finish {
    /// The file is closed: return this.
    case done(Result<Void, FileError>)
    /// Another call closes it: wait for it, then return its outcome.
    case wait(DispatchGroup)
    /// Close it (if it was not discarded), then tell the others.
    case close(AppendingFile?, DispatchGroup)
  }

  func finish() throws(ActionLogOutput.FileError) {
    let step = lock.withLock { () -> Finish in
      if let outcome { return .done(outcome) }
      if let finishing { return .wait(finishing) }
      let group = DispatchGroup()
      group.enter()
      finishing = group
      defer {
        file = nil
        isClosed = true
      }
      return .close(file, group)
    }
    switch step {
    case .done(let outcome):
      try outcome.get()
    case .wait(let group):
      group.wait()
      // Set before the group was left.
      try lock.withLock { outcome }.unsafelyUnwrapped.get()
    case .close(let file, let group):
      var closing: FileError?
      do throws(FileFailure) {
        try file?.close()
      } catch {
        closing = FileError(error)
      }
      let result = lock.withLock { () -> Result<Void, FileError> in
        let result: Result<Void, FileError> = (firstFailure ?? closing).map { .failure($0) } ?? .success(())
        outcome = result
        return result
      }
      group.leave()
      try result.get()
    }
  }

  func discard() {
    let file = lock.withLock { () -> AppendingFile? in
      defer {
        self.file = nil
        isClosed = true
      }
      return isClosed ? nil : self.file
    }
    file?.discard()
  }
}
