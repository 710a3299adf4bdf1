/// Why lines of a session were not sent to the inspector: the `reason` of a `gap`.
enum GapReason: String, Sendable {
  /// The buffer was full of lines not yet sent (a slow inspector), or a line was too long to send.
  case buffer
  /// The inspector paused the session.
  case paused
  /// The app was not connected, and its buffer full, or no longer held what the inspector missed.
  case disconnected
}

/// What the connection sends next from its buffer: a line, or lines it does not send.
enum Outgoing: Equatable, Sendable {
  case line(n: Int, text: String)
  case gap(from: Int, count: Int, reason: GapReason)
}

/// The lines of a session between the log and the socket, and the recent ones already sent: a
/// bounded buffer, numbered from 0 (`n`) in the order the log wrote them.
///
/// A pure value: ``LiveOutput`` keeps it under its lock. The log appends (``append(_:)``), never
/// waiting: when the lines not yet sent fill the buffer (``maxLines`` or ``maxBytes``), a new line
/// is not kept, only counted, as a gap. Lines already sent stay while there is room, for the
/// inspector that reconnects without them (``rewind(to:)``) and for steering, which reads them
/// (``entries(from:until:)``); the oldest go first to make room. Lines written while paused are kept
/// as history but sent as one gap, on resume.
struct LineBuffer {
  /// One line, or a run of lines that were not kept.
  struct Entry: Sendable {
    /// The `n` of its first line.
    let start: Int
    /// How many lines: 1 for a line; more for a gap.
    var count: Int
    /// The line as the log wrote it, its line break included; `nil` for a gap.
    let text: String?
    /// Why a gap's lines were not kept; `.paused` for a line written while paused.
    var reason: GapReason?
    /// The bytes it takes in the buffer.
    let size: Int

    var end: Int { start + count }
    var isGap: Bool { text == nil }
    var isPausedLine: Bool { text != nil && reason == .paused }
  }

  /// The most lines kept, sent or not.
  let maxLines: Int
  /// The most bytes of lines kept, sent or not.
  let maxBytes: Int
  /// The longest line sent: a message is at most 16 MiB, its envelope and line break included.
  static let lineLimit = (16 << 20) - 64

  private var entries: [Entry] = []
  /// The index of the first entry kept in `entries` (those before it are gone).
  private var head = 0
  /// The `n` of the next line the log writes.
  private(set) var next = 0
  /// The `n` of the next line to send.
  private(set) var sendNext = 0
  /// The lines kept, and their bytes.
  private var lineCount = 0
  private var bytes = 0
  /// Whether lines are held back as paused.
  private(set) var isPaused = false
  /// Whether a connection takes lines now: a line dropped meanwhile is a gap of `.buffer`, else of
  /// `.disconnected`.
  var isConnected = false
  /// Whether the sender went back to what the inspector holds (``rewind(to:)``): lines no longer
  /// kept before the first one kept are then a gap of `.disconnected`.
  private var isRewound = false

  /// Counts, for ``InspectorConnection/Statistics``.
  private(set) var dropped = 0
  private(set) var sentLines = 0
  private(set) var pausedLines = 0

  init(maxLines: Int, maxBytes: Int) {
    self.maxLines = max(1, maxLines)
    self.maxBytes = max(1, maxBytes)
  }

  /// The `n` of the first line kept; ``next`` when none is.
  var first: Int {
    head < entries.count ? entries[head].start : next
  }

  /// Whether there is something to send.
  var hasWork: Bool {
    guard sendNext < next else { return false }
    // Lines gone before the first kept: lines of an earlier connection (a rewind), sent at once,
    // or lines written while paused, sent as a gap on resume.
    if sendNext < first { return isRewound || !isPaused }
    guard isPaused, let index = index(of: sendNext) else { return true }
    return !entries[index].isPausedLine
  }

  /// Takes in the line the log wrote, and returns its `n`.
  mutating func append(_ text: String) -> Int {
    let n = next
    next += 1
    let size = text.utf8.count
    guard size <= Self.lineLimit, size <= maxBytes else {
      drop(n, reason: .buffer)
      return n
    }
    while lineCount + 1 > maxLines || bytes + size > maxBytes, let front = frontIfEvictable {
      evict(front)
    }
    guard lineCount + 1 <= maxLines && bytes + size <= maxBytes else {
      drop(n, reason: isConnected ? .buffer : .disconnected)
      return n
    }
    if isPaused { pausedLines += 1 }
    entries.append(Entry(start: n, count: 1, text: text, reason: isPaused ? .paused : nil, size: size))
    lineCount += 1
    bytes += size
    return n
  }

  /// The front entry, if it may go to make room: a line sent, or written while paused (it is
  /// sent as a gap, which needs no text); a gap once sent.
  private var frontIfEvictable: Entry? {
    guard head < entries.count else { return nil }
    let front = entries[head]
    if front.end <= sendNext { return front }
    return front.isPausedLine && !front.isGap ? front : nil
  }

  private mutating func evict(_ front: Entry) {
    if !front.isGap {
      lineCount -= 1
      bytes -= front.size
    }
    entries[head] = Entry(start: front.start, count: front.count, text: nil, reason: front.reason, size: 0)
    head += 1
    if head >= 1024 && head * 2 >= entries.count {
      entries.removeFirst(head)
      head = 0
    }
  }

  /// Counts line `n` as not kept, in the gap it continues or in a new one. A gap is an entry of
  /// its own, which takes no room; a run of them past the limit joins the last one, so that the
  /// entries stay bounded whatever comes.
  private mutating func drop(_ n: Int, reason: GapReason) {
    dropped += 1
    if let last = entries.last, entries.count > head, last.isGap, last.end == n,
      last.reason == reason || entries.count - head > maxLines + 16
    {
      entries[entries.count - 1].count += 1
      return
    }
    entries.append(Entry(start: n, count: 1, text: nil, reason: reason, size: 0))
  }

  /// Starts or stops holding lines back; returns how many lines written while paused the resume
  /// lets go (as a gap).
  @discardableResult
  mutating func setPaused(_ paused: Bool) -> Int {
    guard paused != isPaused else { return 0 }
    isPaused = paused
    guard !paused else { return 0 }
    // Lines from the first one not sent that were written while paused: those no longer kept
    // (only lines written while paused go before they are sent, unless a rewind sent them again),
    // then those kept.
    var count = isRewound ? 0 : max(0, first - sendNext)
    guard let index = index(of: max(sendNext, first)) else { return count }
    for entry in entries[index...] where entry.isPausedLine { count += 1 }
    return count
  }

  /// The room a gap takes in what ``take(byteLimit:)`` sends: about the bytes of its message.
  private static let gapSize = 64

  /// Takes what to send next, in order, up to about `byteLimit` bytes (at least one message):
  /// lines, and gaps for what was not kept or was written while paused. Stops, while paused, at
  /// the first line written while paused.
  mutating func take(byteLimit: Int) -> [Outgoing] {
    var taken: [Outgoing] = []
    var size = 0
    // The start of a run of lines written while paused and no longer kept: sent on resume, as one
    // gap with the lines written while paused that follow it.
    var pausedFrom: Int?
    if sendNext < first {
      if isRewound {
        taken.append(.gap(from: sendNext, count: first - sendNext, reason: .disconnected))
        size += Self.gapSize
      } else if isPaused {
        return []
      } else {
        pausedFrom = sendNext
      }
      sendNext = first
    }
    isRewound = false
    guard var index = index(of: sendNext) else {
      if let pausedFrom { taken.append(.gap(from: pausedFrom, count: first - pausedFrom, reason: .paused)) }
      return taken
    }
    if let from = pausedFrom, !entries[index].isPausedLine {
      taken.append(.gap(from: from, count: first - from, reason: .paused))
      size += Self.gapSize
      pausedFrom = nil
    }
    while index < entries.count, size < byteLimit || taken.isEmpty {
      let entry = entries[index]
      if entry.isPausedLine {
        if isPaused { break }
        // The run of lines written while paused: one gap.
        var end = index
        while end < entries.count, entries[end].isPausedLine { end += 1 }
        let from = pausedFrom ?? max(sendNext, entry.start)
        pausedFrom = nil
        taken.append(.gap(from: from, count: entries[end - 1].end - from, reason: .paused))
        size += Self.gapSize
        sendNext = entries[end - 1].end
        index = end
        continue
      }
      if let text = entry.text {
        taken.append(.line(n: entry.start, text: text))
        size += entry.size
        sentLines += 1
      } else {
        let from = max(sendNext, entry.start)
        taken.append(.gap(from: from, count: entry.end - from, reason: entry.reason ?? .buffer))
        size += Self.gapSize
      }
      sendNext = entry.end
      index += 1
    }
    return taken
  }

  /// Sends again from line `have`, what a new connection's inspector holds up to: lines it missed
  /// that are no longer kept become a gap. A `have` past what the log wrote sends from there on.
  mutating func rewind(to have: Int) {
    sendNext = min(max(0, have), next)
    isRewound = true
  }

  /// The entries kept that hold lines from `n` to `end` (not included), in order.
  func entries(from n: Int, until end: Int) -> ArraySlice<Entry> {
    guard var index = index(of: max(n, first)) else { return [] }
    let start = index
    while index < entries.count, entries[index].start < end { index += 1 }
    return entries[start..<index]
  }

  /// The index of the entry that holds line `n`, if it is kept.
  private func index(of n: Int) -> Int? {
    guard n >= first, n < next else { return nil }
    var low = head
    var high = entries.count - 1
    while low < high {
      let middle = low + (high - low + 1) / 2
      if entries[middle].start <= n { low = middle } else { high = middle - 1 }
    }
    return entries[low].start <= n && n < entries[low].end ? low : nil
  }
}
