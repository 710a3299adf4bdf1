/// The rows of a long log, a page at a time, as `/rows` serves them: the events that pass the
/// filters, from a position on, each with its lines read from the file and checked as
/// ``LogLines`` checks them.
///
/// ```json
/// {"identity":"2049-1311-9f0c2b7d1e4a5c38","end":151000000,"lines":1000000,"events":1000000,
///  "entries":1000000,"errors":0,"shown":1000000,"from":999990,
///  "rows":[{"position":999990,"event":999990,"size":1,
///           "entries":[{"index":999990,"before":999987,"line":999991,"raw":"…"}]}]}
/// ```
///
/// `shown` counts the events that pass the filters; `from` is the position of the first row;
/// `at`, when asked for with `at=EVENT`, the position of the first event at or after `EVENT` that
/// passes (or of the last that passes);
/// with `counts=1`, the names of the stores and of the actions with their counts, and the 20
/// slowest commits of the log (`slowest`, entries with their `event`; past 1 MiB of their lines,
/// without their line, with their `store`, `label` and `duration`); each entry carries its
/// index among the log's entries and the index of the entry with the
/// state of the same store before it (`before`, -1 for none), which `/entry?index=` serves.
enum LogRows {
  /// The most rows one request is given.
  static let largestCount = 500
  /// The most entries of one event given in its row: a global dispatch to more stores shows
  /// its first ones, and its `size`.
  static let entriesPerRow = 64
  /// The longest line a row carries; a longer one is shown as a bad line that says so.
  static let largestLine = 64 << 20
  /// The most bytes of lines one answer carries: past them, an entry comes without its line,
  /// marked `"deferred":true`, for the page to ask for it alone (`/entry`) when it shows it.
  static let largestAnswer = 16 << 20
  /// The most bytes of lines the slowest commits carry (`counts=1`, asked for every second while
  /// a page follows the log): past them, a commit comes without its line, marked
  /// `"deferred":true`, with what the list shows of it (`store`, `label`, `duration`).
  static let largestSlowest = 1 << 20

  /// The filters of the list: a store, an action case, an outcome (or `held`, or `error` for bad
  /// lines), and a text searched in the store, outcome, action, state, holds and `cancelledBy` of
  /// each line as it is written (letters in any case, as the page lowers the case of both).
  struct Filter: Equatable, Sendable {
    var store = ""
    var action = ""
    var outcome = ""
    var text = ""

    var isEmpty: Bool { store.isEmpty && action.isEmpty && outcome.isEmpty && text.isEmpty }
  }

  /// The events that pass a filter, found for the entries indexed so far and extended as the
  /// index grows.
  struct Found: Sendable {
    let filter: Filter
    /// The entries looked at.
    private(set) var looked = 0
    /// The events that pass, in order.
    private(set) var events: [Int32] = []

    init(filter: Filter) {
      self.filter = filter
    }

    /// Looks at the entries indexed since the last time, reading their lines from the file open
    /// as `descriptor` when the filter has a text.
    mutating func extend(_ index: LogIndex, descriptor: Int32, path: String) throws(InspectorError) {
      let store = filter.store.isEmpty ? nil : index.storeNames.number(ifAny: filter.store) ?? -2
      let action = filter.action.isEmpty ? nil : index.actionNames.number(ifAny: filter.action) ?? -2
      let outcome: Int32? =
        switch filter.outcome {
        case "", "held", "error": nil
        default: index.outcomeNames.number(ifAny: filter.outcome) ?? -2
        }
      let written = JSONText.string(filter.text.lowercased()).dropFirst().dropLast()
      let needle = Array(Self.folded(written.utf8))
      let forms = Self.forms(of: written)
      while looked < index.count {
        // The next lines together, a few megabytes of them.
        var last = looked
        if !needle.isEmpty {
          while last + 1 < index.count,
            index.starts[last + 1] + Int(index.lengths[last + 1]) - index.starts[looked] <= LogIndex.chunkSize
          {
            last += 1
          }
        }
        let base = index.starts[looked]
        // A line too long to show is alone here (it is longer than a chunk), and its row shows
        // none of its text: it is not read, and a search finds nothing in it.
        let bytes =
          needle.isEmpty || Int(index.lengths[looked]) > largestLine
          ? [] : try LogFile.read(descriptor, path: path, in: base..<(index.starts[last] + Int(index.lengths[last])))
        for entry in looked...last {
          if let store, index.stores[entry] != store { continue }
          if let action, index.actions[entry] != action { continue }
          let flags = index.flags[entry]
          if filter.outcome == "held" && flags & LogIndex.hasHolds == 0 { continue }
          if filter.outcome == "error" && flags & LogIndex.isBad == 0 { continue }
          if let outcome, index.outcomes[entry] != outcome { continue }
          if !needle.isEmpty {
            let range = (index.starts[entry] - base)..<(index.starts[entry] - base + Int(index.lengths[entry]))
            guard range.upperBound <= bytes.count,
              Self.holds(bytes, range, needle, forms, whole: flags & LogIndex.isBad != 0)
            else { continue }
          }
          add(index.events[entry])
        }
        looked = last + 1
      }
    }

    /// The position of the first event at or after `event` among those that pass: the count of
    /// those before it.
    func position(of event: Int) -> Int {
      var low = 0
      var high = events.count
      while low < high {
        let middle = (low + high) / 2
        if Int(events[middle]) < event { low = middle + 1 } else { high = middle }
      }
      return low
    }

    private mutating func add(_ event: Int32) {
      guard let last = events.last, event <= last else {
        events.append(event)
        return
      }
      var low = 0
      var high = events.count
      while low < high {
        let middle = (low + high) / 2
        if events[middle] < event { low = middle + 1 } else { high = middle }
      }
      if events[low] != event { events.insert(event, at: low) }
    }

    /// For a text with characters beyond ASCII, the forms of each of its characters as a line
    /// may write them: in lower case, as the page searches, or in upper case when that is the
    /// same letter (`É` for `é`, not `SS` for `ß`), as the page lowers the case of the lines it
    /// searches; `nil` for a text of ASCII only, whose letters are folded.
    private static func forms(of text: Substring) -> [[[UInt8]]]? {
      guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
      return text.map { character in
        let lower = String(character)
        let upper = lower.uppercased()
        return upper != lower && upper.lowercased() == lower
          ? [Array(lower.utf8), Array(upper.utf8)] : [Array(lower.utf8)]
      }
    }

    /// Whether the line in `bytes[range]` holds `needle` (or one of `forms`, when there are) in
    /// what a search looks through.
    private static func holds(
      _ bytes: [UInt8], _ range: Range<Int>, _ needle: [UInt8], _ forms: [[[UInt8]]]?, whole: Bool
    ) -> Bool {
      bytes.withUnsafeBufferPointer { buffer in
        let contains = { (range: Range<Int>) in
          forms.map { Self.contains(buffer, range, $0) } ?? Self.contains(buffer, range, needle)
        }
        if whole { return contains(range) }
        guard let fields = LineFields(buffer, range, searching: true) else { return contains(range) }
        return fields.searched.contains { contains($0) }
      }
    }

    /// Whether `buffer[range]` holds, one after the other, a form of each character of `forms`.
    private static func contains(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ forms: [[[UInt8]]])
      -> Bool
    {
      guard let first = forms.first else { return true }
      let firstBytes = first.map { $0[0] }
      var start = range.lowerBound
      while start < range.upperBound {
        guard firstBytes.contains(buffer[start]) else {
          start += 1
          continue
        }
        var at = start
        var matched = true
        for character in forms {
          guard
            let form = character.first(where: { form in
              at + form.count <= range.upperBound && form.indices.allSatisfy { buffer[at + $0] == form[$0] }
            })
          else {
            matched = false
            break
          }
          at += form.count
        }
        if matched { return true }
        start += 1
      }
      return false
    }

    private static func contains(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ needle: [UInt8]) -> Bool {
      guard range.count >= needle.count else { return false }
      let first = needle[0]
      var at = range.lowerBound
      let last = range.upperBound - needle.count
      while at <= last {
        if fold(buffer[at]) == first {
          var matched = 1
          while matched < needle.count && fold(buffer[at + matched]) == needle[matched] { matched += 1 }
          if matched == needle.count { return true }
        }
        at += 1
      }
      return false
    }

    private static func fold(_ byte: UInt8) -> UInt8 {
      byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    private static func folded(_ bytes: some Sequence<UInt8>) -> [UInt8] { bytes.map(fold) }
  }

  /// The JSON text of `count` rows from position `from` of the events that `found` holds (every
  /// event when it is `nil`), read from the file open as `descriptor`.
  static func document(
    _ index: LogIndex, found: Found?, from: Int, count: Int, counts: Bool, at event: Int? = nil, identity: String,
    descriptor: Int32, path: String, largestAnswer: Int = largestAnswer, largestSlowest: Int = largestSlowest
  ) -> String {
    let shown = found?.events.count ?? index.eventFirst.count
    let first = min(from, shown)
    let last = min(shown, first + min(count, largestCount))
    var text = "{\"identity\":\"\(identity)\",\"end\":\(index.mark?.offset ?? 0),\"lines\":\(index.mark?.lines ?? 0),"
    text += "\"events\":\(index.eventFirst.count),\"entries\":\(index.count),\"errors\":\(index.errors),"
    text += "\"shown\":\(shown),\"from\":\(first),"
    if let event, shown > 0 {
      text += "\"at\":\(min(shown - 1, found.map { $0.position(of: event) } ?? event)),"
    }
    if counts {
      text += "\"stores\":\(names(index.storeNames.names, index.storeCounts)),"
      text += "\"actions\":\(names(index.actionNames.names, index.actionCounts)),"
      // The slowest commits of the whole log, each with its event.
      text += "\"slowest\":["
      var budget = largestSlowest
      for (number, slow) in index.slowest.enumerated() {
        if number > 0 { text += "," }
        let entry = Int(slow.entry)
        let length = Int(index.lengths[entry])
        let item: String
        if length > budget {
          item =
            deferred(index, entry).dropLast()
            + ",\"store\":\(JSONText.string(index.storeNames.names[Int(index.stores[entry])])),"
            + "\"label\":\(JSONText.string(index.actionNames.names[Int(index.actions[entry])])),"
            + "\"duration\":\(wholeOrFraction(slow.duration))}"
        } else {
          budget -= length
          item = self.entry(index, entry, descriptor: descriptor)
        }
        text += "{\"event\":\(index.events[entry])," + item.dropFirst()
      }
      text += "],"
    }
    text += "\"rows\":["
    var budget = largestAnswer
    for position in first..<last {
      let event = found.map { Int($0.events[position]) } ?? position
      let entries = index.entries(ofEvent: event)
      if position > first { text += "," }
      text += "{\"position\":\(position),\"event\":\(event),\"size\":\(entries.count),\"entries\":["
      for (number, entry) in entries.prefix(entriesPerRow).enumerated() {
        if number > 0 { text += "," }
        let length = Int(index.lengths[Int(entry)])
        // The first line of an answer is always sent: a page asks for a long one alone.
        if length > budget && budget < largestAnswer {
          text += deferred(index, Int(entry))
        } else {
          budget -= min(budget, length)
          text += self.entry(index, Int(entry), descriptor: descriptor)
        }
      }
      text += "]}"
    }
    return text + "]}"
  }

  /// The JSON text of entry `entry`: its index, the entry of its state before, and its line.
  static func entry(_ index: LogIndex, _ entry: Int, descriptor: Int32) -> String {
    let number = index.numbers[entry]
    let length = Int(index.lengths[entry])
    let line: String
    if length > largestLine {
      line =
        "{\"line\":\(number),\"error\":\(JSONText.string("this line has \(length) bytes: more than a row shows")),\"raw\":\"\"}"
    } else if let bytes = LogFile.bytes(of: descriptor, in: index.starts[entry]..<(index.starts[entry] + length)) {
      line =
        LogLines.entry(bytes[...], number: number, isComplete: true)
        ?? "{\"line\":\(number),\"error\":\"the line is blank now\",\"raw\":\"\"}"
    } else {
      line = "{\"line\":\(number),\"error\":\"the line cannot be read: the log changed\",\"raw\":\"\"}"
    }
    return "{\"index\":\(entry),\"before\":\(index.befores[entry])," + line.dropFirst()
  }

  /// Entry `entry` without its line, which the page asks for alone.
  private static func deferred(_ index: LogIndex, _ entry: Int) -> String {
    "{\"index\":\(entry),\"before\":\(index.befores[entry]),\"line\":\(index.numbers[entry]),\"deferred\":true,"
      + "\"error\":\"a long line: select its row to load it\",\"raw\":\"\"}"
  }

  /// `value`, finite and not negative, as a JSON number: a whole one without a fraction.
  private static func wholeOrFraction(_ value: Double) -> String {
    value < 0x1p53 && value == value.rounded(.towardZero) ? String(Int64(value)) : "\(value)"
  }

  /// The names with the most entries, at most 500, with their counts, as `[["name",count],…]`.
  private static func names(_ names: [String], _ counts: [Int]) -> String {
    var order = Array(names.indices)
    if order.count > 500 {
      order.sort { counts[$0] > counts[$1] }
      order.removeLast(order.count - 500)
    }
    return "[" + order.map { "[\(JSONText.string(names[$0])),\(counts[$0])]" }.joined(separator: ",") + "]"
  }
}
