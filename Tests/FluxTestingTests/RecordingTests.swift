import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Recording")
struct RecordingTests {
  static let good = """
    {"action":{"add":{"_0":2}},"durationNanoseconds":1500,"outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}
    {"action":{"add":{"_0":-1}},"outcome":"cancelled","store":"a","time":"2026-11-23T03:07:49.124Z"}

    {"action":{"reset":{}},"durationNanoseconds":900,"outcome":"committed","store":"b","time":"2026-11-23T03:07:50.000Z"}

    """

  @Test("reads each line: store, outcome, duration, time, and the action as its own type")
  func readsLines() throws {
    let recording = try Recording(jsonLines: Self.good)
    #expect(recording.entries.map(\.line) == [1, 2, 4])
    #expect(recording.entries.map(\.store) == ["a", "a", "b"])
    #expect(recording.entries.map(\.outcome) == [.committed, .cancelled, .committed])
    #expect(recording.entries.map(\.durationNanoseconds) == [1500, nil, 900])
    #expect(try recording.entries.map { try $0.action(as: CounterAction.self) } == [.add(2), .add(-1), .reset])
    #expect(recording.entries[0].time.timeIntervalSince1970.truncatingRemainder(dividingBy: 1) > 0.12)
  }

  @Test(
    "a bad line throws an error that names it",
    arguments: [
      (
        "{\"action\":{\"reset\":{}},\"outcome\":\"committed\",\"time\":\"2026-11-23T03:07:49.123Z\"}\n", 1,
        "\"store\" is missing"
      ),
      ("not json\n", 1, "not JSON"),
      (
        "{\"action\":{\"reset\":{}},\"outcome\":\"maybe\",\"store\":\"a\",\"time\":\"2026-11-23T03:07:49.123Z\"}\n", 1,
        "\"outcome\""
      ),
      (
        "{\"action\":{\"reset\":{}},\"outcome\":\"committed\",\"store\":\"a\",\"time\":\"yesterday\"}\n", 1,
        "\"time\" is not an ISO 8601 time"
      ),
      (
        "{\"outcome\":\"committed\",\"store\":\"a\",\"time\":\"2026-11-23T03:07:49.123Z\"}\n", 1,
        "\"action\" is missing"
      ),
    ])
  func badLine(text: String, line: Int, message: String) {
    let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: Self.good + text) }
    #expect(error?.line == line + 4)
    #expect(error?.message.contains(message) == true, "\(String(describing: error))")
  }

  @Test("lines that end in CR LF read as lines that end in LF")
  func crlf() throws {
    let crlf = Self.good.replacingOccurrences(of: "\n", with: "\r\n")
    let recording = try Recording(jsonLines: crlf)
    let plain = try Recording(jsonLines: Self.good)
    #expect(recording.entries.map(\.line) == plain.entries.map(\.line))
    #expect(recording.entries.map(\.store) == plain.entries.map(\.store))
    #expect(try recording.entries.map { try $0.action(as: CounterAction.self) } == [.add(2), .add(-1), .reset])
    let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: crlf + "not json\r\n") }
    #expect(error?.line == 5)
  }

  @Test("a log cut short in the middle of its last line says so, with the line")
  func truncated() {
    let cut = String(Self.good.dropLast(40))
    let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: cut) }
    #expect(error?.description == "line 4: the line is cut short: the log ends in the middle of it")
  }

  @Test("an action of another type is an error naming the line")
  func wrongActionType() throws {
    let recording = try Recording(jsonLines: Self.good)
    let error = #expect(throws: RecordingError.self) { try recording.entries[2].action(as: Int.self) }
    #expect(error?.line == 4)
    #expect(error?.message.hasPrefix("the action is not a Int") == true)
  }

  @Test("a file that does not exist is an error naming it")
  func missingFile() {
    let error = #expect(throws: RecordingError.self) {
      try Recording(contentsOf: URL(fileURLWithPath: "/nonexistent/session.jsonl"))
    }
    #expect(error?.line == nil)
    #expect(error?.message.hasPrefix("cannot read /nonexistent/session.jsonl") == true)
  }

  @Test("a file log cut short inside a multi-byte character names its last line as cut short")
  func cutInsideAMultibyteCharacter() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("recording-\(UUID()).jsonl")
    defer { try? FileManager.default.removeItem(at: url) }
    let log = ActionLog(output: try .file(url))
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "café")])
    store.actions.dispatch(action: .add(1))
    store.actions.dispatch(action: .add(2))
    try log.finish()
    var data = try Data(contentsOf: url)
    // Cut in the middle of the "é" of the second line, keeping its first byte.
    let secondLine = data.firstIndex(of: UInt8(ascii: "\n"))! + 1
    let accent = data[secondLine...].firstRange(of: Data("é".utf8))!.lowerBound
    data = data.prefix(accent + 1)
    try data.write(to: url)
    let error = #expect(throws: RecordingError.self) { try Recording(contentsOf: url) }
    #expect(error?.description == "line 2: the line is cut short: the log ends in the middle of it")
  }

  @Test("a line of a file log that is not UTF-8 is an error naming that line")
  func lineThatIsNotUTF8() throws {
    var data = Data(Self.good.utf8)
    data.append(contentsOf: [0xFF, 0xFE, UInt8(ascii: "\n")])
    data.append(contentsOf: Data(Self.good.utf8))
    let error = #expect(throws: RecordingError.self) { try read(data) }
    #expect(error?.description == "line 5: the line is not UTF-8 at byte 1")
  }

  @Test("a file log that starts with a UTF-8 byte order mark reads")
  func byteOrderMark() throws {
    #expect(try read(Data([0xEF, 0xBB, 0xBF]) + Data(Self.good.utf8)).entries.count == 3)
    #expect(try Recording(jsonLines: "\u{FEFF}" + Self.good).entries.count == 3)
  }

  /// Reads `data` as a file log.
  private func read(_ data: Data) throws -> Recording {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("recording-\(UUID()).jsonl")
    defer { try? FileManager.default.removeItem(at: url) }
    try data.write(to: url)
    return try Recording(contentsOf: url)
  }

  @Test("a file log of only a byte order mark, or of one and a line end, is an empty log")
  func onlyAByteOrderMark() throws {
    #expect(try read(Data([0xEF, 0xBB, 0xBF])).entries.isEmpty)
    #expect(try read(Data([0xEF, 0xBB, 0xBF, 0x0A])).entries.isEmpty)
    #expect(try read(Data([0xEF, 0xBB, 0xBF, 0x0D, 0x0A])).entries.isEmpty)
  }

  @Test("a file log whose byte order mark stands on a blank first line reads")
  func byteOrderMarkOnABlankFirstLine() throws {
    let recording = try read(Data([0xEF, 0xBB, 0xBF, 0x0A]) + Data(Self.good.utf8))
    #expect(recording.entries.map(\.line) == [2, 3, 5])
  }

  @Test("a whole last line with a bad byte inside a string is not UTF-8, not cut short")
  func badByteInTheLastLine() throws {
    var data = Data(Self.good.utf8)
    data.append(contentsOf: Data(#"{"action":{"reset":{}},"outcome":"committed","store":"a"#.utf8))
    data.append(0xFF)
    data.append(contentsOf: Data(#"","time":"2026-11-23T03:07:49.123Z"}"#.utf8))
    let error = #expect(throws: RecordingError.self) { try read(data) }
    #expect(error?.description == "line 5: the line is not UTF-8 at byte 56")
  }

  /// A line of the log with `time` as its time.
  private static func line(time: String) -> String {
    #"{"action":{"reset":{}},"durationNanoseconds":1,"outcome":"committed","store":"a","time":""#
      + time + "\"}\n"
  }

  @Test(
    "a time with a day its month does not have, a field out of range, or more after it is an error naming the line",
    arguments: [
      "2026-02-30T00:00:00.000Z", "2026-02-29T00:00:00.000Z", "2026-11-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z",
      "2026-11-23T24:00:00.000Z", "2026-11-23T03:60:00.000Z", "2026-11-23T03:07:60.000Z",
      "2026-11-23T03:07:49.123Zjunk",
      " 2026-11-23T03:07:49.123Z", "2026-11-23T03:07:49.123+25:00", "2026-11-23T03:07:49.Z",
      "99999-01-01T00:00:00.000Z",
      "２０２６-11-23T03:07:49.123Z",
    ])
  func timeOutOfRange(time: String) {
    let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: Self.good + Self.line(time: time)) }
    #expect(error?.description == "line 5: \"time\" is not an ISO 8601 time: \(time)")
  }

  @Test("a time with a long fraction of a second is an error or the instant it names, never another")
  func longFractionOfASecond() throws {
    // Ten digits or more, read by a date formatter, named another instant; 35 or more stopped the process.
    for digits in [10, 35, 200] {
      let time = "2026-11-23T03:07:49." + String(repeating: "6", count: digits) + "Z"
      let entry = try #require(try Recording(jsonLines: Self.line(time: time)).entries.first)
      #expect(abs(entry.time.timeIntervalSince1970 - 1_795_403_269.666_666) < 0.000_01, "\(digits) digits")
    }
  }

  @Test("times read back as the instants they name: leap days, offsets from UTC, fractions of every length")
  func timesReadBack() throws {
    let times: [(String, TimeInterval)] = [
      ("2026-11-23T03:07:49.123Z", 1_795_403_269.123), ("2024-02-29T23:59:59.5Z", 1_709_251_199.5),
      ("2000-02-29T00:00:00.000Z", 951_782_400), ("1969-12-31T23:59:59.999Z", -0.001),
      ("2026-11-23T03:07:49.123+05:30", 1_795_383_469.123), ("2026-11-23T03:07:49.123-00:00", 1_795_403_269.123),
      ("2026-11-23T03:07:49.123456789Z", 1_795_403_269.123_457),
    ]
    let recording = try Recording(jsonLines: times.map { Self.line(time: $0.0) }.joined())
    for (entry, (text, expected)) in zip(recording.entries, times) {
      #expect(abs(entry.time.timeIntervalSince1970 - expected) < 0.000_001, "\(text)")
    }
  }

  @Test("a time that an action log wrote reads back as the instant it wrote, to the millisecond")
  func loggedTimesReadBack() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "a")])
    let before = Date()
    store.actions.dispatch(action: .add(1))
    let after = Date()
    log.flush()  // the log's queue writes the lines
    let time = try #require(try Recording(jsonLines: lines.text).entries.first).time
    #expect(time.timeIntervalSince(before) > -0.001 && time.timeIntervalSince(after) < 0.001)
  }

  @Test(
    "a line that nests arrays or objects more than 512 deep is an error naming it",
    arguments: [
      String(repeating: "[", count: 513), String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
      #"{"action":"# + String(repeating: "[", count: 512), String(repeating: "{\"a\":", count: 600),
    ])
  func nestedTooDeep(line: String) throws {
    for text in [Self.good + line, Self.good + line + "\n"] {
      let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: text) }
      #expect(error?.description == "line 5: the line nests arrays and objects more than 512 deep")
    }
    let deepest =
      #"{"action":"# + String(repeating: "[", count: 511) + String(repeating: "]", count: 511)
      + #","outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}"#
    #expect(try Recording(jsonLines: deepest).entries.count == 1)
  }

  @Test(
    "a last line that is whole but not an action says what is wrong, not that the log is cut short",
    arguments: [
      ("null", "not an action of the log (the line is null)"),
      ("true", "not an action of the log (the line is not an object)"),
      ("{}}", "not an action of the log (not JSON)"),
      (
        #"{"action":{"reset":{}},"outcome":"committed","store":"\ud800","time":"2026-11-23T03:07:49.123Z"}"#,
        "not an action of the log (not JSON)"
      ),
    ])
  func wholeLastLine(line: String, message: String) {
    let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: Self.good + line) }
    #expect(error?.description == "line 5: \(message)")
  }

  @Test("a duration that is not a whole number of nanoseconds that fits says so, with the key")
  func durationOutOfRange() {
    for duration in ["-1", "1.5", "1e30", "18446744073709551616"] {
      let text =
        #"{"action":{"reset":{}},"durationNanoseconds":"# + duration
        + #","outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}"#
      let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: text) }
      #expect(
        error?.description
          == "line 1: not an action of the log (\"durationNanoseconds\": not a whole number from 0 to \(UInt64.max))")
    }
  }

  @Test("a hold's nanoseconds that are negative or too large say so, with the key, not that the line is not JSON")
  func holdNanosecondsOutOfRange() {
    for nanoseconds in ["-1", "1.5", "1e30", "18446744073709551616"] {
      let text =
        #"{"action":{"reset":{}},"holds":[{"middleware":"A","nanoseconds":1},{"middleware":"B","nanoseconds":"#
        + nanoseconds + #"}],"outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}"#
      let error = #expect(throws: RecordingError.self) { try Recording(jsonLines: text) }
      #expect(
        error?.description
          == "line 1: not an action of the log (\"holds[1].nanoseconds\": not a whole number from 0 to \(UInt64.max))")
    }
  }

  @Test("an action with a number too large for its type is an error that says so")
  func actionNumberOutOfRange() throws {
    let text =
      #"{"action":{"add":{"_0":9223372036854775808}},"outcome":"committed","store":"a","#
      + #""time":"2026-11-23T03:07:49.123Z"}"#
    let entry = try #require(try Recording(jsonLines: text).entries.first)
    let error = #expect(throws: RecordingError.self) { try entry.action(as: CounterAction.self) }
    #expect(error?.message.contains("too large for its type") == true, "\(String(describing: error))")
  }
}
