#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The index of a long log: where each line is in the file, and the few fields of it that the
/// page's list, counts and filters need, in compact arrays, never the lines themselves.
///
/// It is built as the file grows: each ``update(descriptor:file:path:)`` reads only the bytes
/// written since the last one (a file cut short, replaced or written over is indexed again from
/// its start, as ``LogMark`` tells), a few megabytes at a time. The lines are then read from the
/// file when a page of rows is asked for (``LogRows``).
///
/// Its entries are the non-blank lines ended by a line break, numbered from 0 in the order of the
/// file; its events group them as the page does: a line of a global dispatch joins the event of
/// the first line of that dispatch in its session, unless that event already has its store. A
/// session starts where a line's `sequence` is not past the one before.
struct LogIndex: Sendable {
  /// How many bytes are read at once.
  static let chunkSize = 4 << 20
  /// The most entries (and events) an index holds: its arrays are of 32-bit numbers.
  static let largestCount = Int(Int32.max) - 1

  /// What the index has read of the file: whole lines up to an offset.
  private(set) var mark: LogMark?
  /// How many bytes after the mark's offset hold no line break: a line being written, scanned
  /// once, not at every update.
  private var scanned = 0

  /// Per entry: where its line starts, how long it is (its line break left out), its number in
  /// the file, and its fields as numbers (a store, action or outcome is an index into its names;
  /// -1 on a bad line).
  private(set) var starts: [Int] = []
  private(set) var lengths: [UInt32] = []
  private(set) var numbers: [Int] = []
  private(set) var stores: [Int32] = []
  private(set) var actions: [Int32] = []
  private(set) var outcomes: [Int32] = []
  /// The event of each entry, and the entry of the same store's state before it in its session
  /// (-1 for none).
  private(set) var events: [Int32] = []
  private(set) var befores: [Int32] = []
  private(set) var flags: [UInt8] = []

  /// The first entry of each event, and the others of the events that have more.
  private(set) var eventFirst: [Int32] = []
  private(set) var eventMore: [Int32: [Int32]] = [:]
  private var eventStores: [Int32: Set<Int32>] = [:]

  private(set) var storeNames = Names()
  private(set) var actionNames = Names()
  private(set) var outcomeNames = Names()
  /// How many entries each store and each action case has.
  private(set) var storeCounts: [Int] = []
  private(set) var actionCounts: [Int] = []
  private(set) var errors = 0
  /// The slowest commits, slowest first (of two as slow, the earlier first): their durations and
  /// entries.
  private(set) var slowest: [(duration: Double, entry: Int32)] = []
  /// How many commits ``slowest`` keeps.
  static let slowestCount = 20

  private var session = 0
  private var lastSequence: Double?
  private var byDispatch: [DispatchKey: Int32] = [:]
  private var lastState: [Int64: Int32] = [:]

  static let hasState: UInt8 = 1
  static let hasHolds: UInt8 = 2
  static let isBad: UInt8 = 4

  private struct DispatchKey: Hashable {
    let session: Int
    let id: String
  }

  /// Names, each numbered once in the order they come.
  struct Names: Sendable {
    private(set) var names: [String] = []
    private var numbers: [String: Int32] = [:]

    mutating func number(of name: String) -> Int32 {
      if let number = numbers[name] { return number }
      let number = Int32(names.count)
      names.append(name)
      numbers[name] = number
      return number
    }

    func number(ifAny name: String) -> Int32? { numbers[name] }
  }

  /// The number of entries.
  var count: Int { starts.count }

  /// The entries of event `event`, in the order of the file.
  func entries(ofEvent event: Int) -> [Int32] {
    [eventFirst[event]] + (eventMore[Int32(event)] ?? [])
  }

  /// Indexes what was written to the file open as `descriptor` since the last update; from its
  /// start when it is not the file indexed before, or was cut short or written over.
  ///
  /// - Returns: Whether the index was started again.
  @discardableResult
  mutating func update(descriptor: Int32, file: LogFile.Identity, path: String) throws(InspectorError) -> Bool {
    var restarted = false
    if mark.map({ !$0.isSame(as: file, descriptor: descriptor) }) ?? true {
      self = LogIndex()
      mark = LogMark(start: file)
      restarted = true
    }
    var mark = mark!
    defer { self.mark = mark }
    let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Self.chunkSize)
    defer { chunk.deallocate() }
    while mark.offset + scanned < file.size && count < Self.largestCount {
      let start = mark.offset + scanned
      let read = try Self.read(descriptor, path: path, at: start, into: chunk, upTo: file.size)
      // Cut short while it was read: the next update tells.
      if read == 0 { break }
      let bytes = UnsafeBufferPointer(rebasing: chunk[..<read])
      guard let firstBreak = Self.find(bytes, from: 0) else {
        // A line longer than this chunk: its bytes are not kept, only how far it goes.
        scanned += read
        continue
      }
      if scanned > 0 {
        // The line that began before this chunk has ended: indexed alone, read again if it is
        // not too long to show.
        let end = start + firstBreak
        let length = end - mark.offset
        if length <= LogRows.largestLine {
          let line = try LogFile.read(descriptor, path: path, in: mark.offset..<end)
          guard line.count == length else { break }
          line.withUnsafeBufferPointer { add($0, 0..<length, at: mark.offset, number: mark.lines + 1) }
        } else {
          addTooLong(at: mark.offset, length: length, number: mark.lines + 1)
        }
        guard let next = LogMark(at: end + 1, lines: mark.lines + 1, in: file, descriptor: descriptor) else { break }
        mark = next
        scanned = 0
        continue
      }
      // The last line break is near the end: looked for from there.
      var lastBreak = read - 1
      while bytes[lastBreak] != UInt8(ascii: "\n") { lastBreak -= 1 }
      let whole = UnsafeBufferPointer(rebasing: bytes[...lastBreak])
      var lines = 0
      var at = 0
      while at < whole.count, count < Self.largestCount, let end = Self.find(whole, from: at) {
        lines += 1
        add(whole, at..<end, at: mark.offset, number: mark.lines + lines)
        at = end + 1
      }
      mark = mark.advanced(over: UnsafeBufferPointer(rebasing: whole[..<at]), lines: lines)
    }
    return restarted
  }

  /// Reads the bytes from `offset` into `buffer`, as many as fit and the file has up to `size`;
  /// returns how many were read (fewer when the file was cut short).
  private static func read(
    _ descriptor: Int32, path: String, at offset: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, upTo size: Int
  ) throws(InspectorError) -> Int {
    let wanted = min(buffer.count, size - offset)
    var done = 0
    while done < wanted {
      let result = pread(descriptor, buffer.baseAddress! + done, wanted - done, off_t(offset + done))
      if result < 0 {
        if errno == EINTR { continue }
        throw InspectorError("cannot read the log \(path): \(LogFile.describe(errno))")
      }
      if result == 0 { break }
      done += result
    }
    return done
  }

  /// The index of the first line break in `buffer` from `start` on.
  private static func find(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    guard start < buffer.count, let found = memchr(buffer.baseAddress! + start, 0x0A, buffer.count - start) else {
      return nil
    }
    return UnsafeRawPointer(found) - UnsafeRawPointer(buffer.baseAddress!)
  }

  /// Indexes a line too long to read as a bad line, which its row says.
  private mutating func addTooLong(at start: Int, length: Int, number: Int) {
    starts.append(start)
    lengths.append(UInt32(min(length, Int(UInt32.max))))
    numbers.append(number)
    errors += 1
    stores.append(-1)
    actions.append(-1)
    outcomes.append(-1)
    befores.append(-1)
    flags.append(Self.isBad)
    newEvent(Int32(count - 1))
  }

  /// Indexes the line in `buffer[range]`, which starts `base` bytes into the file.
  private mutating func add(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, at base: Int, number: Int) {
    var content = range
    if content.last.map({ buffer[$0] == UInt8(ascii: "\r") }) ?? false { content = content.dropLast() }
    guard
      content.contains(where: { buffer[$0] != UInt8(ascii: " ") && buffer[$0] != UInt8(ascii: "\t") })
    else { return }
    let index = Int32(count)
    starts.append(base + range.lowerBound)
    lengths.append(UInt32(min(range.count, Int(UInt32.max))))
    numbers.append(number)
    guard let fields = LineFields(buffer, content) else {
      errors += 1
      stores.append(-1)
      actions.append(-1)
      outcomes.append(-1)
      befores.append(-1)
      flags.append(Self.isBad)
      newEvent(index)
      return
    }
    if let sequence = fields.sequence {
      if let lastSequence, sequence <= lastSequence { session += 1 }
      lastSequence = sequence
    }
    let store = storeNames.number(of: fields.store)
    let action = actionNames.number(of: fields.actionCase)
    if Int(store) == storeCounts.count { storeCounts.append(0) }
    if Int(action) == actionCounts.count { actionCounts.append(0) }
    storeCounts[Int(store)] += 1
    actionCounts[Int(action)] += 1
    stores.append(store)
    actions.append(action)
    outcomes.append(outcomeNames.number(of: fields.outcome))
    if let duration = fields.duration { noteDuration(duration, of: index) }
    flags.append((fields.hasState ? Self.hasState : 0) | (fields.hasHolds ? Self.hasHolds : 0))
    if fields.hasState {
      let key = Int64(session) << 32 | Int64(store)
      befores.append(lastState[key] ?? -1)
      lastState[key] = index
    } else {
      befores.append(-1)
    }
    guard let dispatch = fields.dispatch else {
      newEvent(index)
      return
    }
    let key = DispatchKey(session: session, id: dispatch)
    if let group = byDispatch[key], stores[Int(eventFirst[Int(group)])] != store,
      !(eventStores[group]?.contains(store) ?? false)
    {
      events.append(group)
      eventMore[group, default: []].append(index)
      eventStores[group, default: [stores[Int(eventFirst[Int(group)])]]].insert(store)
    } else {
      byDispatch[key] = Int32(eventFirst.count)
      newEvent(index)
    }
  }

  /// Keeps `entry` among the slowest commits if it is one of them.
  private mutating func noteDuration(_ duration: Double, of entry: Int32) {
    if slowest.count == Self.slowestCount, duration <= slowest[slowest.count - 1].duration { return }
    let place = slowest.firstIndex { $0.duration < duration } ?? slowest.count
    slowest.insert((duration, entry), at: place)
    if slowest.count > Self.slowestCount { slowest.removeLast() }
  }

  private mutating func newEvent(_ entry: Int32) {
    events.append(Int32(eventFirst.count))
    eventFirst.append(entry)
  }
}
