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
  /// Where each line is, and its fields: for a log longer than `pagedEntries`.
  private var index = LogIndex()
  /// The events that pass the filters last asked for.
  private var found: LogRows.Found?
  /// How many times the index was started again after it had indexed the log: mixed into the
  /// identity of a long log (see ``LogIdentity/generation(_:)``), so that a page holding rows of
  /// a file written over in place, its first line kept, is told to load the log anew.
  private var generation: UInt64 = 0
  /// How many entries a log has at most to be loaded whole; a longer one is served in pages.
  let pagedEntries: Int

  init(path: String, pagedEntries: Int = 100_000) {
    self.path = path
    self.pagedEntries = pagedEntries
  }

  /// The log as the page loads it (see ``LogDocument``): whole, or, when it has more than
  /// `pagedEntries` entries, its counts, with `"paged":true`, for the page to ask for its rows
  /// (see ``LogRows``). Each carries `pagedFrom`, the number of entries past which a log is paged.
  func document() async throws(InspectorError) -> String {
    try await FileWork.run(on: queue) { Result { () throws(InspectorError) in try self.read() } }.get()
  }

  /// The rows that `query` asks for (see ``LogRows``), or `nil` when the log is not the file
  /// that the query names any more.
  func rows(_ query: RowsQuery) async throws(InspectorError) -> String? {
    try await FileWork.run(on: queue) {
      Result { () throws(InspectorError) -> String? in
        try LogFile.withOpenFile(path: self.path) { descriptor, file throws(InspectorError) -> String? in
          try self.updateIndex(descriptor: descriptor, file: file)
          guard let identity = self.identity(of: file, descriptor: descriptor), identity == query.identity else {
            return nil
          }
          var found: LogRows.Found?
          if !query.filter.isEmpty {
            var extended =
              self.found.flatMap { $0.filter == query.filter ? $0 : nil } ?? LogRows.Found(filter: query.filter)
            self.found = nil
            try extended.extend(self.index, descriptor: descriptor, path: self.path)
            self.found = extended
            found = extended
          }
          return LogRows.document(
            self.index, found: found, from: query.from, count: query.count, counts: query.counts, at: query.at,
            identity: identity.text, descriptor: descriptor, path: self.path)
        }
      }
    }.get()
  }

  /// The entry `query.index` asks for (see ``LogRows/entry(_:_:descriptor:)``), or `nil` when the
  /// log is not the file that the query names any more, or has no such entry.
  func entry(_ query: RowsQuery) async throws(InspectorError) -> String? {
    try await FileWork.run(on: queue) {
      Result { () throws(InspectorError) -> String? in
        try LogFile.withOpenFile(path: self.path) { descriptor, file throws(InspectorError) -> String? in
          try self.updateIndex(descriptor: descriptor, file: file)
          guard let identity = self.identity(of: file, descriptor: descriptor), identity == query.identity else {
            return nil
          }
          guard query.index < self.index.count else { return nil }
          return LogRows.entry(self.index, query.index, descriptor: descriptor)
        }
      }
    }.get()
  }

  /// Brings the index up to date with the file open as `descriptor`. On `queue` only.
  private func updateIndex(descriptor: Int32, file: LogFile.Identity) throws(InspectorError) {
    let indexed = index.mark != nil
    guard try index.update(descriptor: descriptor, file: file, path: path) else { return }
    found = nil
    if indexed { generation &+= 1 }
  }

  /// The identity of a long log, as its documents carry it. On `queue` only.
  private func identity(of file: LogFile.Identity, descriptor: Int32) -> LogIdentity? {
    LogIdentity(of: file, descriptor: descriptor)?.generation(generation)
  }

  /// Reads what was written since the last read. On `queue` only.
  private func read() throws(InspectorError) -> String {
    try LogFile.withOpenFile(path: path) { descriptor, file throws(InspectorError) in
      try updateIndex(descriptor: descriptor, file: file)
      if index.count > pagedEntries {
        let identity = self.identity(of: file, descriptor: descriptor)?.text ?? ""
        // Long: the page asks for its rows. What was read whole is let go.
        self.mark = nil
        entries = []
        partial = nil
        let rows = LogRows.document(
          index, found: nil, from: 0, count: 0, counts: true, identity: identity, descriptor: descriptor, path: path)
        return "{\"path\":\(JSONText.string(path)),\"paged\":true,\"pagedFrom\":\(pagedEntries)," + rows.dropFirst()
      }
      // Followed by `/events`, which tells a log written over: the file's identity.
      let identity = LogIdentity(of: file, descriptor: descriptor)?.text ?? ""
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
      let document = LogDocument.json(
        path: path, entries: entries + (last.map { [$0] } ?? []), end: mark.offset, lines: mark.lines,
        partial: last != nil, identity: identity)
      return "{\"pagedFrom\":\(pagedEntries)," + document.dropFirst()
    }
  }
}
