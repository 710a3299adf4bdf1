/// Follows the log from a mark: what each look at the file finds written since, as the events
/// the page reads (`lines`, or `reset` when the log was cut short, replaced or written over).
///
/// A look reads nothing when the file has not changed since the last one, and reads only what
/// was appended when it has: the bytes of a line still without its line break are scanned once
/// for it, not again at every look, and checked once it has come.
struct LogFollower: Sendable {
  /// What one look found.
  enum Step: Equatable, Sendable {
    /// Lines appended, as the JSON document of a `lines` event.
    case lines(String)
    /// Why the page must load the log again; the last step.
    case reset(String)
  }

  /// How many bytes are read at once to find a line break.
  static let chunkSize = 4 << 20
  /// How many chunks one look reads at most: more is read at the next look.
  static let chunksPerLook = 4

  let path: String
  /// The file followed, as each event names it.
  let identity: String
  /// What the page has: whole lines up to an offset.
  private(set) var mark: LogMark
  /// How many bytes after the mark's offset hold no line break.
  private var scanned = 0
  /// The file at the last look that read everything in it.
  private var seen: LogFile.Identity?

  init(path: String, identity: String, mark: LogMark) {
    self.path = path
    self.identity = identity
    self.mark = mark
  }

  /// The follower of the log at `path` from where the page that asked `query` stands, or the
  /// step that tells the page to load the log again: the log is another file now, or shorter,
  /// or the offset is not where a line starts in it.
  static func resume(path: String, from query: EventsQuery) -> Start {
    do {
      return try LogFile.withOpenFile(path: path) { descriptor, file in
        guard let identity = LogIdentity(of: file, descriptor: descriptor), identity == query.identity,
          let mark = LogMark(at: query.from, lines: query.line - 1, in: file, descriptor: descriptor)
        else { return .reset(.reset("the log changed since the page read it")) }
        return .following(LogFollower(path: path, identity: identity.text, mark: mark))
      }
    } catch {
      return .reset(.reset(error.message))
    }
  }

  /// How following the log starts: from where the page stands, or with a `reset`.
  enum Start: Sendable {
    case following(LogFollower)
    case reset(Step)
  }

  /// Looks at the log once, and returns what to send; a ``Step/reset(_:)`` is the last step.
  mutating func look() -> [Step] {
    do {
      return try LogFile.withOpenFile(path: path) { descriptor, file throws(InspectorError) in
        try look(at: file, descriptor: descriptor)
      }
    } catch {
      return [.reset(error.message)]
    }
  }

  private mutating func look(at file: LogFile.Identity, descriptor: Int32) throws(InspectorError) -> [Step] {
    if file == seen && mark.offset + scanned >= file.size { return [] }
    guard mark.isSame(as: file, descriptor: descriptor) else {
      let reason =
        if file.device != mark.device || file.inode != mark.inode {
          "the log was replaced: another file is at its path"
        } else if file.size < mark.offset {
          "the log was cut short"
        } else {
          "the log was written over"
        }
      return [.reset(reason)]
    }
    var steps: [Step] = []
    var start = mark.offset + scanned
    var chunks = 0
    while start < file.size && chunks < Self.chunksPerLook {
      chunks += 1
      let bytes = try LogFile.read(descriptor, path: path, in: start..<min(file.size, start + Self.chunkSize))
      // Cut short while it was read: the next look tells.
      if bytes.isEmpty { break }
      if let lastBreak = bytes.lastIndex(of: UInt8(ascii: "\n")) {
        let end = start + lastBreak + 1
        // The line that began before this chunk is read again once, now that it is whole.
        let whole =
          start == mark.offset
          ? bytes[..<(lastBreak + 1)] : try LogFile.read(descriptor, path: path, in: mark.offset..<end)[...]
        guard whole.count == end - mark.offset else { break }
        // On this thread only: every page that follows the log reads what is appended.
        let lines = LogLines(whole, firstLine: mark.lines + 1, includePartialLine: false, concurrently: false)
        mark = mark.advanced(over: whole, lines: lines.completeLines)
        steps.append(
          .lines(
            LogDocument.json(
              path: path, entries: lines.entries, end: mark.offset, lines: mark.lines, partial: false,
              identity: identity)))
      }
      start += bytes.count
      scanned = start - mark.offset
    }
    seen = start >= file.size ? file : nil
    return steps
  }
}
