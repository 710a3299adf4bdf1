import Foundation
import Testing

@testable import FluxInspector

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("A long log is indexed as it grows and served a page of rows at a time")
struct LogIndexTests {
  /// The index of the log at `path`, brought up to date.
  @discardableResult
  private func indexed(_ path: String, _ index: inout LogIndex) throws -> Bool {
    try LogFile.withOpenFile(path: path) { descriptor, file throws(InspectorError) in
      try index.update(descriptor: descriptor, file: file, path: path)
    }
  }

  private func append(_ text: String, to path: String) throws {
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(text.utf8))
    try handle.close()
  }

  private func line(_ store: String, sequence: Int, dispatch: String? = nil, state: Int? = nil) -> String {
    let extra =
      (dispatch.map { #""dispatch":"\#($0)","# } ?? "") + "\"sequence\":\(sequence),"
      + (state.map { #""state":{"count":\#($0)},"# } ?? "")
    return Fixture.line(store: store, extra: extra) + "\n"
  }

  @Test func theIndexReadsOnlyWhatWasAppendedAndAWholeLineAtATime() throws {
    let scratch = try Scratch()
    let first = line("a", sequence: 1) + "\n  \r\n" + line("b", sequence: 2)
    let path = try scratch.write("session.jsonl", first + #"{"store":"c""#)
    var index = LogIndex()
    #expect(try indexed(path, &index))
    // Blank lines are no entries; the line without its line break waits for it.
    #expect(index.count == 2)
    #expect(index.numbers == [1, 4])
    #expect(index.starts == [0, first.utf8.count - line("b", sequence: 2).utf8.count])
    #expect(index.mark?.offset == first.utf8.count)
    try append(#","outcome":"committed","time":"2026-11-23T03:07:49.123Z","action":"go"}"# + "\n", to: path)
    #expect(try !indexed(path, &index))
    #expect(index.count == 3)
    #expect(index.numbers == [1, 4, 5])
    #expect(index.storeNames.names == ["a", "b", "c"])
    #expect(index.actionNames.names == ["add", "go"])
  }

  @Test func aLogWrittenOverOrCutShortIsIndexedAgainFromItsStart() throws {
    let scratch = try Scratch()
    let path = try scratch.write("session.jsonl", line("a", sequence: 1) + line("b", sequence: 2))
    var index = LogIndex()
    try indexed(path, &index)
    #expect(index.count == 2)
    try scratch.write("session.jsonl", line("z", sequence: 1))
    #expect(try indexed(path, &index))
    #expect(index.count == 1)
    #expect(index.storeNames.names == ["z"])
  }

  @Test func eventsSessionsAndStatesBeforeAreThoseThePageMakes() throws {
    let scratch = try Scratch()
    let text = [
      line("a", sequence: 1, dispatch: "1", state: 1),
      line("b", sequence: 2, dispatch: "1", state: 1),
      // The same store again under that id: another event, as one dispatch reaches a store once.
      line("a", sequence: 3, dispatch: "1", state: 2),
      #"{"not":"an action"}"# + "\n",
      // A new session (its sequence starts again): its dispatch "1" is an event of its own, and
      // its states have no state before them.
      line("a", sequence: 1, dispatch: "1", state: 7),
      line("b", sequence: 2, state: 8),
    ].joined()
    let path = try scratch.write("session.jsonl", text)
    var index = LogIndex()
    try indexed(path, &index)
    #expect(index.count == 6)
    #expect(index.events == [0, 0, 1, 2, 3, 4])
    #expect(index.eventFirst == [0, 2, 3, 4, 5])
    #expect(index.entries(ofEvent: 0) == [0, 1])
    #expect(index.befores == [-1, -1, 0, -1, -1, -1])
    #expect(index.errors == 1)
    #expect(index.flags[3] == LogIndex.isBad)
  }

  @Test func theTwentySlowestCommitsAreKeptAsTheLogGrows() throws {
    let scratch = try Scratch()
    func commit(_ duration: Int) -> String {
      #"{"action":"go","durationNanoseconds":\#(duration),"outcome":"committed","store":"s","time":"t"}"# + "\n"
    }
    // 1 to 30 µs, in a shuffled order, and a line whose duration is not a count.
    let durations = (1...30).map { ($0 * 7) % 31 }
    let path = try scratch.write("session.jsonl", durations.prefix(15).map(commit).joined() + commit(-5))
    var index = LogIndex()
    try indexed(path, &index)
    try append(durations.dropFirst(15).map(commit).joined(), to: path)
    try indexed(path, &index)
    #expect(index.slowest.map(\.duration) == (11...30).reversed().map(Double.init))
    let entries = index.slowest.map { Int($0.entry) }
    #expect(entries.map { $0 < 15 ? durations[$0] : durations[$0 - 1] } == Array((11...30).reversed()))
  }

  @Test func fieldsAreReadAsThePageReadsThemWithoutRecursion() throws {
    func fields(_ text: String) -> LineFields? {
      let bytes = Array(text.utf8)
      return bytes.withUnsafeBufferPointer { LineFields($0, 0..<bytes.count) }
    }
    let escaped = try #require(fields(Fixture.line(store: #"caf\u00e9 \"1\""#, action: #"{"add":{"_0":2}}"#)))
    #expect(escaped.store == "café \"1\"")
    #expect(fields(Fixture.line(action: #""clear""#))?.actionCase == "clear")
    #expect(fields(Fixture.line(action: #"{"a":1,"b":2}"#))?.actionCase == "object")
    #expect(fields(Fixture.line(action: "[1]"))?.actionCase == "[…]")
    #expect(fields(Fixture.line(action: "null"))?.actionCase == "object")
    #expect(fields(Fixture.line(action: "true"))?.actionCase == "boolean")
    #expect(fields(#"{"store":"a","time":"t","outcome":"committed"}"#) == nil)
    #expect(fields(#"["store"]"#) == nil)
    #expect(fields(Fixture.line() + " x") == nil)
    // A million brackets deep: read in one loop, not one call per level.
    let deep = String(repeating: "[", count: 1_000_000) + String(repeating: "]", count: 1_000_000)
    #expect(fields(Fixture.line(action: deep))?.actionCase == "[…]")
  }

  /// A log of `count` commits of stores `s0`, `s1`, `s2`, with the text `needle N` in action N.
  private func longLog(_ scratch: borrowing Scratch, count: Int) throws -> String {
    var text = ""
    for number in 0..<count {
      text += Fixture.line(
        store: "s\(number % 3)", action: #"{"add":{"title":"needle \#(number)"}}"#,
        extra: "\"sequence\":\(number + 1),\"state\":{\"count\":\(number)},")
      text += "\n"
    }
    return try scratch.write("session.jsonl", text)
  }

  private func json(_ reply: HTTPReply) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
  }

  @Test func aLongLogIsServedAsItsCountsAndItsRowsAPageAtATime() async throws {
    let scratch = try Scratch()
    let path = try longLog(scratch, count: 300)
    try await withServer(logPath: path, pagedEntries: 100) { port throws in
      let log = try json(try await fetch("/log", port: port))
      #expect(log["paged"] as? Bool == true)
      #expect(log["entries"] as? Int == 300)
      #expect(log["events"] as? Int == 300)
      #expect(log["shown"] as? Int == 300)
      #expect((log["rows"] as? [Any])?.isEmpty == true)
      let stores = try #require(log["stores"] as? [[Any]])
      #expect(stores.map { $0[0] as? String } == ["s0", "s1", "s2"])
      #expect(stores.map { $0[1] as? Int } == [100, 100, 100])
      // Of commits as slow, the earlier first.
      #expect((log["slowest"] as? [[String: Any]])?.map { $0["event"] as? Int } == Array(0..<20))
      let identity = try #require(log["identity"] as? String)
      let page = try json(try await fetch("/rows?from=290&count=50&identity=\(identity)", port: port))
      let rows = try #require(page["rows"] as? [[String: Any]])
      #expect(rows.map { $0["position"] as? Int } == Array(290..<300))
      let entries = try #require(rows.last?["entries"] as? [[String: Any]])
      #expect(entries.first?["line"] as? Int == 300)
      #expect(entries.first?["index"] as? Int == 299)
      #expect(entries.first?["before"] as? Int == 296)
      #expect((entries.first?["raw"] as? String)?.contains("needle 299") == true)
      let before = try json(try await fetch("/entry?index=296&identity=\(identity)", port: port))
      #expect((before["raw"] as? String)?.contains("needle 296") == true)
      // Filters and the search are the server's: the rows are those that pass.
      let found = try json(
        try await fetch("/rows?from=0&count=10&store=s1&q=NEEDLE%2029&identity=\(identity)", port: port))
      #expect(found["shown"] as? Int == 3)
      #expect((found["rows"] as? [[String: Any]])?.map { $0["event"] as? Int } == [292, 295, 298])
      // Where an event stands among those that pass: the first at or after it, or the last.
      for (event, position) in [(0, 0), (293, 1), (295, 1), (299, 2)] {
        let at = try json(
          try await fetch("/rows?count=0&store=s1&q=needle%2029&at=\(event)&identity=\(identity)", port: port))
        #expect(at["at"] as? Int == position, "event \(event)")
      }
      // The log grows: the index and the search go on from where they were.
      try append(
        Fixture.line(store: "s1", action: #"{"add":{"title":"needle 2999"}}"#, extra: "\"sequence\":301,") + "\n",
        to: path)
      let grown = try json(
        try await fetch("/rows?from=0&count=0&store=s1&q=needle%2029&identity=\(identity)", port: port))
      #expect(grown["shown"] as? Int == 4)
      #expect(grown["events"] as? Int == 301)
    }
  }

  @Test func rowsAskedByManyTasksWhileTheLogGrowsAreWholeLinesInOrder() async throws {
    let scratch = try Scratch()
    let path = try longLog(scratch, count: 150)
    try await withServer(logPath: path, pagedEntries: 100) { port throws in
      let identity = try #require(try json(try await fetch("/log", port: port))["identity"] as? String)
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for number in 150..<400 {
            try append(
              Fixture.line(
                store: "s\(number % 3)", action: #"{"add":{"title":"needle \#(number)"}}"#,
                extra: "\"sequence\":\(number + 1),") + "\n", to: path)
          }
        }
        for task in 0..<6 {
          group.addTask {
            var seen = 0
            for round in 0..<15 {
              let query = round % 2 == 0 ? "" : "&store=s\(task % 3)"
              let page = try json(
                try await fetch(
                  "/rows?from=\((task * 37 + round * 11) % 150)&count=20\(query)&identity=\(identity)", port: port))
              let events = try #require(page["events"] as? Int)
              #expect(events >= seen && events >= 150)
              seen = events
              for row in try #require(page["rows"] as? [[String: Any]]) {
                let event = try #require(row["event"] as? Int)
                let entry = try #require((row["entries"] as? [[String: Any]])?.first)
                // One line per event, whole: its number is the event's, its text that line's.
                #expect(entry["line"] as? Int == event + 1)
                #expect(entry["error"] == nil)
                #expect((entry["raw"] as? String)?.contains("needle \(event)\"") == true)
                if !query.isEmpty { #expect(event % 3 == task % 3) }
              }
            }
          }
        }
        try await group.waitForAll()
      }
    }
  }

  @Test func linesPastTheBytesOfOneAnswerComeWithoutTheirTextForThePageToAskAlone() throws {
    let scratch = try Scratch()
    let long = String(repeating: "x", count: 1000)
    let text = (0..<4).map { Fixture.line(action: #"{"add":{"title":"\#(long)\#($0)"}}"#) + "\n" }.joined()
    let path = try scratch.write("session.jsonl", text)
    var index = LogIndex()
    try indexed(path, &index)
    let document = try LogFile.withOpenFile(path: path) { descriptor, _ in
      LogRows.document(
        index, found: nil, from: 0, count: 4, counts: false, identity: "", descriptor: descriptor, path: path,
        largestAnswer: 2500)
    }
    let rows =
      try #require(
        try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])["rows"] as? [[String: Any]]
    let entries = try #require(rows?.compactMap { ($0["entries"] as? [[String: Any]])?.first })
    #expect(entries.map { $0["deferred"] as? Bool } == [nil, nil, true, true])
    #expect(entries.map { ($0["raw"] as? String)?.isEmpty } == [false, false, true, true])
    // The first line of an answer is always sent, however long.
    let alone = try LogFile.withOpenFile(path: path) { descriptor, _ in
      LogRows.document(
        index, found: nil, from: 3, count: 1, counts: false, identity: "", descriptor: descriptor, path: path,
        largestAnswer: 10)
    }
    #expect(alone.contains("xxx3"))
    #expect(!alone.contains("deferred"))
  }

  @Test func theSlowestCommitsPastTheirBytesComeWithoutTheirTextButWithWhatTheListShows() throws {
    let scratch = try Scratch()
    let long = String(repeating: "x", count: 1000)
    // 30 commits of 1 KB, the later the slower.
    let text = (1...30).map { number in
      #"{"action":{"add":{"title":"\#(long)"}},"durationNanoseconds":\#(number * 1000),"outcome":"committed","#
        + #""store":"s<b>","time":"2026-11-23T03:07:49.123Z"}"# + "\n"
    }.joined()
    let path = try scratch.write("session.jsonl", text)
    var index = LogIndex()
    try indexed(path, &index)
    let document = try LogFile.withOpenFile(path: path) { descriptor, _ in
      LogRows.document(
        index, found: nil, from: 0, count: 0, counts: true, identity: "", descriptor: descriptor, path: path,
        largestSlowest: 5000)
    }
    // The lines of the slowest commits are asked for every second while a page follows the log:
    // they are bounded as a page of rows is.
    #expect(document.utf8.count < 5000 + 20 * 300)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
    let slowest = try #require(object["slowest"] as? [[String: Any]])
    #expect(slowest.map { $0["event"] as? Int } == Array((10..<30).reversed()))
    #expect(slowest.prefix(4).allSatisfy { ($0["raw"] as? String)?.contains(long) == true && $0["deferred"] == nil })
    let deferred = slowest.dropFirst(4)
    #expect(deferred.allSatisfy { $0["deferred"] as? Bool == true && ($0["raw"] as? String)?.isEmpty == true })
    #expect(deferred.map { $0["duration"] as? Int } == (11...26).reversed().map { $0 * 1000 })
    #expect(deferred.allSatisfy { $0["store"] as? String == "s<b>" && $0["label"] as? String == "add" })
  }

  @Test func aSearchFindsLettersBeyondASCIIInAnyCaseAsAPageOfTheWholeLogDoes() throws {
    let scratch = try Scratch()
    let titles = ["ÉCOLE", "école", "Ecole", "ÉcOlE", "straße", "STRASSE", "Ωmega", "ωMEGA", "(.*)[É]"]
    let text = titles.map { Fixture.line(action: #"{"add":{"title":"\#($0)"}}"#) + "\n" }.joined()
    let path = try scratch.write("session.jsonl", text)
    var index = LogIndex()
    try indexed(path, &index)
    func found(_ text: String) throws -> [Int32] {
      var found = LogRows.Found(filter: LogRows.Filter(text: text))
      try LogFile.withOpenFile(path: path) { descriptor, _ throws(InspectorError) in
        try found.extend(index, descriptor: descriptor, path: path)
      }
      return found.events
    }
    // The page lowers the case of what is typed, and of what it searches, letters beyond ASCII too.
    #expect(try found("école") == [0, 1, 3])
    #expect(try found("ÉCOLE") == [0, 1, 3])
    #expect(try found("ωmega") == [6, 7])
    #expect(try found("straße") == [4])
    #expect(try found("strasse") == [5])
    #expect(try found("(.*)[é]") == [8])
  }

  @Test func aSearchPassesOverALineTooLongToShowWithoutReadingIt() throws {
    let scratch = try Scratch()
    let path = try scratch.write("session.jsonl", Fixture.line(action: #"{"add":{"title":"needle 0"}}"#) + "\n")
    // A line of more than 1 GiB, whose bytes take no room on the disk, then a line to find.
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: try handle.seekToEnd() + UInt64(LogFile.largestRead) + 10)
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(("\n" + Fixture.line(action: #"{"add":{"title":"needle 2"}}"#) + "\n").utf8))
    try handle.close()
    var index = LogIndex()
    try indexed(path, &index)
    #expect(index.count == 3)
    #expect(index.flags[1] == LogIndex.isBad)
    var found = LogRows.Found(filter: LogRows.Filter(text: "NEEDLE"))
    try LogFile.withOpenFile(path: path) { descriptor, _ throws(InspectorError) in
      try found.extend(index, descriptor: descriptor, path: path)
    }
    // The long line shows none of its text, so a search finds nothing in it.
    #expect(found.events == [0, 2])
  }

  @Test(arguments: [
    "/rows?from=0&count=501&identity=ID", "/rows?from=-1&count=5&identity=ID",
    "/rows?from=99999999999999999999&identity=ID", "/rows?from=1&from=2&identity=ID", "/rows?from=0",
    "/rows?identity=1-2-3", "/entry?index=18446744073709551616&identity=ID",
  ])
  func aRowsRequestOutOfRangeIsRefusedInWords(target: String) async throws {
    let scratch = try Scratch()
    let path = try longLog(scratch, count: 20)
    try await withServer(logPath: path, pagedEntries: 10) { port throws in
      let identity = try #require(try json(try await fetch("/log", port: port))["identity"] as? String)
      let reply = try await fetch(target.replacingOccurrences(of: "ID", with: identity), port: port)
      #expect(reply.status == 400)
      #expect(!reply.body.isEmpty)
      // The server still answers.
      #expect(try await fetch("/rows?from=0&count=1&identity=\(identity)", port: port).status == 200)
    }
  }

  @Test func rowsOfALogWrittenOverInPlaceWithItsFirstLineAreRefusedWithAConflict() async throws {
    let scratch = try Scratch()
    let path = try longLog(scratch, count: 20)
    try await withServer(logPath: path, pagedEntries: 10) { port throws in
      let identity = try #require(try json(try await fetch("/log", port: port))["identity"] as? String)
      #expect(try await fetch("/rows?from=0&count=1&identity=\(identity)", port: port).status == 200)
      // The same file, its first line kept, the others written over: the rows the page holds
      // are of another log.
      let first = try String(contentsOfFile: path, encoding: .utf8).prefix { $0 != "\n" } + "\n"
      let handle = try #require(FileHandle(forWritingAtPath: path))
      try handle.truncate(atOffset: 0)
      try handle.write(
        contentsOf: Data(
          (first + (0..<30).map { Fixture.line(store: "other", extra: "\"sequence\":\($0 + 2),") + "\n" }.joined())
            .utf8))
      try handle.close()
      #expect(try await fetch("/rows?from=0&count=1&identity=\(identity)", port: port).status == 409)
      #expect(try await fetch("/entry?index=0&identity=\(identity)", port: port).status == 409)
      let again = try json(try await fetch("/log", port: port))
      let other = try #require(again["identity"] as? String)
      #expect(other != identity)
      #expect(again["entries"] as? Int == 31)
      let rows = try json(try await fetch("/rows?from=1&count=1&identity=\(other)", port: port))
      #expect(
        ((rows["rows"] as? [[String: Any]])?.first?["entries"] as? [[String: Any]])?.first?["raw"] as? String
          == Fixture.line(store: "other", extra: "\"sequence\":2,"))
    }
  }

  @Test func rowsOfAnotherFileThanThePageReadAreRefusedWithAConflict() async throws {
    let scratch = try Scratch()
    let path = try longLog(scratch, count: 20)
    try await withServer(logPath: path, pagedEntries: 10) { port throws in
      let identity = try #require(try json(try await fetch("/log", port: port))["identity"] as? String)
      let other = scratch.path("other.jsonl")
      try Data((Fixture.line(store: "other") + "\n").utf8).write(to: URL(fileURLWithPath: other))
      #expect(rename(other, path) == 0)
      #expect(try await fetch("/rows?from=0&count=1&identity=\(identity)", port: port).status == 409)
      #expect(try await fetch("/entry?index=0&identity=\(identity)", port: port).status == 409)
    }
  }
}
