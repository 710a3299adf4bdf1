import Dispatch

/// The lines of the log read so far, so that each request for the log reads only what was
/// written since the last one: a log of 100,000 lines is checked once, not at every load.
///
/// A log that is cut short, replaced, or written over (see ``LogMark``) is read again from its
/// start. The line after the last line break is never kept among the lines read: it is read
/// again until its line break comes, but not while the file stays as it was.
///
/// Requests wait for the log without holding a thread: the reading is done on a queue of its
/// own, one request after the other, and a request that comes while the log is checked waits
/// on that queue, not on a lock (rule 21).
final class LogCache: @unchecked Sendable {
  let path: String
  /// Runs every read, one at a time; the state below is touched there only, which makes the
  /// class sound to share.
  private let queue = DispatchQueue(label: "flux-inspector.log")
  // On `queue` only.
  private var mark: LogMark?
  private var entries: [String] = []
  /// The entry of the line without its line break, and the file it was read from.
  private var partial: (entry: String, file: LogFile.Identity)?

  init(path: String) {
    self.path = path
  }

  /// The log as the page loads it (see ``LogDocument``).
  func document() async throws(InspectorError) -> String {
    try await FileWork.run(on: queue) { Result { () throws(InspectorError) in try self.read() } }.get()
  }

  /// Reads what was written since the last read. On `queue` only.
  private func read() throws(InspectorError) -> String {
    try LogFile.withOpenFile(path: path) { descriptor, file throws(InspectorError) in
      if mark.map({ !$0.isSame(as: file, descriptor: descriptor) }) ?? true {
        mark = LogMark(start: file)
        entries = []
        partial = nil
      }
      var mark = mark!
      var last: String?
      if let partial, partial.file == file {
        last = partial.entry
      } else {
        let bytes = try LogFile.read(descriptor, path: path, in: mark.offset..<file.size)
        let lines = LogLines(bytes[...], firstLine: mark.lines + 1, includePartialLine: true)
        entries += lines.endsInPartialLine ? lines.entries.dropLast() : lines.entries[...]
        mark = mark.advanced(over: bytes[..<lines.completeBytes], lines: lines.completeLines)
        last = lines.endsInPartialLine ? lines.entries.last : nil
        partial = last.map { ($0, file) }
      }
      self.mark = mark
      return LogDocument.json(
        path: path, entries: entries + (last.map { [$0] } ?? []), end: mark.offset, lines: mark.lines,
        partial: last != nil, identity: LogIdentity(of: file, descriptor: descriptor)?.text ?? "")
    }
  }
}
