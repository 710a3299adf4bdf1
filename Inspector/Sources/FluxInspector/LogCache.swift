import Foundation

/// The lines of the log read so far, so that each request for the log reads only what was
/// written since the last one: a log of 100,000 lines is checked once, not at every load.
///
/// A log that is cut short, or another file put in its place, is read again from its start. The
/// line after the last line break is never kept: it is read again until its line break comes.
final class LogCache: @unchecked Sendable {
  let path: String
  private let lock = NSLock()
  // Guarded by `lock`.
  private var identity: LogFile.Identity?
  private var entries: [String] = []
  private var completeBytes = 0
  private var completeLines = 0

  init(path: String) {
    self.path = path
  }

  /// The log as the page loads it (see ``LogDocument``).
  func document() throws(InspectorError) -> String {
    lock.lock()
    defer { lock.unlock() }
    let now = try LogFile.identity(path: path)
    let isSameFile = identity.map { $0.inode == now.inode && $0.device == now.device } ?? false
    if !isSameFile || now.size < completeBytes {
      entries = []
      completeBytes = 0
      completeLines = 0
    }
    let contents = try LogFile.read(path: path, from: completeBytes)
    identity = contents.identity
    let lines = LogLines(contents.bytes[...], firstLine: completeLines + 1, includePartialLine: true)
    entries += lines.endsInPartialLine ? lines.entries.dropLast() : lines.entries[...]
    completeBytes += lines.completeBytes
    completeLines += lines.completeLines
    return LogDocument.json(
      path: path, entries: entries + (lines.endsInPartialLine ? [lines.entries.last!] : []),
      end: completeBytes, lines: completeLines, partial: lines.endsInPartialLine)
  }
}
