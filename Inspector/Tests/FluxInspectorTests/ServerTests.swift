import FluxDevtools
import Foundation
import Testing

@testable import FluxInspector

@Suite("The server serves the page and the log, and nothing else")
struct ServerTests {
  @Test func thePageItsScriptAndItsStyleAreServed() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let page = try await fetch("/", port: port)
      #expect(page.status == 200)
      #expect(page.header("content-type")?.hasPrefix("text/html") == true)
      #expect(page.body.contains("<title>Flux Inspector</title>"))
      #expect(page.body.contains(#"<script src="inspector.js"></script>"#))
      let script = try await fetch("/inspector.js", port: port)
      #expect(script.status == 200)
      #expect(script.header("content-type")?.hasPrefix("text/javascript") == true)
      #expect(script.body.contains("EventSource"))
      let style = try await fetch("/inspector.css", port: port)
      #expect(style.status == 200)
      #expect(style.header("content-type")?.hasPrefix("text/css") == true)
    }
  }

  @Test func theDiffAndTheListOfTheSlowestCommitsAreServedBeforeThePageScript() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let page = try await fetch("/", port: port).body
      let scripts = ["diff.js", "costs.js", "inspector.js"].map { #"<script src="\#($0)"></script>"# }
      #expect(page.contains(scripts.joined(separator: "\n")))
      for (name, global) in [("diff.js", "root.FluxDiff"), ("costs.js", "root.FluxCosts")] {
        let script = try await fetch("/\(name)", port: port)
        #expect(script.status == 200)
        #expect(script.header("content-type")?.hasPrefix("text/javascript") == true)
        #expect(script.body.contains(global))
      }
    }
  }

  @Test func theLogIsServedWithEveryLineAndBadLinesAsErrorsWithTheirNumbers() async throws {
    let scratch = try Scratch()
    let bad = #"{"store":"counter","time":"yesterday","outcome":"committed","action":{}}"#
    let text = [Fixture.line(), "", bad, Fixture.line(outcome: "cancelled"), ""].joined(separator: "\n")
    let log = try scratch.write("session.jsonl", text)
    try await withServer(logPath: log) { port throws in
      let reply = try await fetch("/log", port: port)
      #expect(reply.status == 200)
      #expect(reply.header("content-type") == "application/json")
      let document = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
      let entries = try #require(document["entries"] as? [[String: Any]])
      #expect(entries.map { $0["line"] as? Int } == [1, 3, 4])
      #expect(entries[0]["raw"] as? String == Fixture.line())
      #expect(entries[0]["error"] == nil)
      // The message is `Recording`'s own, for that line read on its own.
      let expected: String
      do {
        _ = try Recording(jsonLines: bad + "\n")
        expected = "no error"
      } catch let error as RecordingError {
        expected = error.message
      }
      #expect(entries[1]["error"] as? String == expected)
      #expect(expected.contains("ISO 8601"))
      #expect(entries[1]["raw"] as? String == bad)
      #expect(document["end"] as? Int == text.utf8.count)
      #expect(document["lines"] as? Int == 4)
      #expect(document["partial"] as? Bool == false)
    }
  }

  @Test func theLogIsReadAgainAtEachRequest() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let reply = try await fetch("/log", port: port)
      #expect(reply.body.contains(#""line":1"#), "\(reply)")
      try scratch.write("session.jsonl", Fixture.line() + "\n" + Fixture.line(store: "other") + "\n")
      #expect(try await fetch("/log", port: port).body.contains(#""line":2"#))
    }
  }

  @Test(
    "Paths outside the page and its log are not found, whatever they hold",
    arguments: [
      "/../etc/passwd", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E%2Fetc%2Fpasswd",
      "/..%2f..%2fetc%2fpasswd", "//etc/passwd", "/etc/passwd", "/log/../../etc/passwd",
      "/events/../../../etc/passwd", "/./../etc/passwd", "/index.html", "/Page/index.html",
      "/session.jsonl", "/inspector.js/x", "/log%00.js", "/proc/self/environ", "http://127.0.0.1/etc/passwd",
      "/..\\..\\etc\\passwd", "/%252e%252e/etc/passwd",
    ])
  func pathTraversalIsRefused(target: String) async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let reply = try await fetch(target, port: port)
      #expect(reply.status == 404 || reply.status == 400, "\(target) answered \(reply.status)")
      #expect(!reply.body.contains("root:"))
      #expect(!reply.body.contains(#""store":"counter""#))
    }
  }

  @Test func onlyGetIsAnswered() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      #expect(try await fetch("/log", port: port).status == 200)
      for method in ["POST", "PUT", "DELETE", "PATCH"] {
        #expect(try await fetch("/log", port: port, method: method).status != 200)
      }
    }
  }

  @Test func eventsCarryTheLinesAppendedToTheLogAndAResetWhenItIsCutShort() async throws {
    let scratch = try Scratch()
    let first = Fixture.line() + "\n"
    let log = try scratch.write("session.jsonl", first)
    try await withServer(logPath: log) { port throws in
      let document = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(document.eventsTarget.hasPrefix("/events?from=\(first.utf8.count)&line=2&identity="))
      let events = try Connection(port: port)
      events.send(document.eventsTarget)
      #expect(await events.read(until: "retry:").contains("text/event-stream"))
      let handle = try #require(FileHandle(forWritingAtPath: log))
      handle.seekToEndOfFile()
      // A line in two writes: it is sent once whole, with its own number.
      handle.write(Data(Fixture.line(store: "late").prefix(20).utf8))
      handle.write(Data((Fixture.line(store: "late").dropFirst(20) + "\n").utf8))
      try handle.close()
      let text = await events.event("event: lines")
      #expect(text.contains(#"{"line":2,"raw":"#))
      #expect(text.contains(#"\"store\":\"late\""#))
      #expect(!text.contains(#""line":1,"#))
      // Cut short: the page is told to load the log again.
      try scratch.write("session.jsonl", "")
      #expect(await events.read(until: "event: reset").contains("event: reset"))
    }
  }

  @Test func eventsFromTheEndOfALogWithoutALineBreakSendTheLastLineOnceItEnds() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n" + Fixture.line(store: "half"))
    let document = try LogDocument.json(path: log)
    #expect(document.contains(#""partial":true"#))
    #expect(document.contains(#""lines":1,"#))
    try await withServer(logPath: log) { port throws in
      let served = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(served.eventsTarget.hasPrefix("/events?from=\(Fixture.line().utf8.count + 1)&line=2&identity="))
      let events = try Connection(port: port)
      events.send(served.eventsTarget)
      await events.read(until: "retry:")
      let handle = try #require(FileHandle(forWritingAtPath: log))
      handle.seekToEndOfFile()
      handle.write(Data("\n".utf8))
      try handle.close()
      let text = await events.event("event: lines")
      #expect(text.contains(#"{"line":2,"raw":"#))
      #expect(text.contains(#"\"store\":\"half\""#))
    }
  }
}

@Suite("The server tells, in one line, why it cannot start")
struct StartTests {
  @Test func aPortInUseIsAnErrorThatSaysSo() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let second = InspectorServer(logPath: log, port: port)
      await #expect(
        throws: InspectorError(
          "cannot listen on 127.0.0.1:\(port): the port is in use; give another with --port, or none")
      ) {
        try await second.run { _ in Issue.record("a second server listened on port \(port)") }
      }
      // The first one still serves.
      #expect(try await fetch("/log", port: port).status == 200)
    }
  }

  @Test func aMissingLogIsAnErrorBeforeAnythingListens() async throws {
    let scratch = try Scratch()
    let server = InspectorServer(logPath: scratch.path("missing.jsonl"))
    await #expect(throws: InspectorError("no log at \(scratch.path("missing.jsonl")): no such file")) {
      try await server.run { _ in Issue.record("listened without a log") }
    }
  }

  /// As root, permissions do not stop a read: what cannot be read here is a folder in the
  /// log's place, and a FIFO, which a plain read would wait on for ever.
  @Test func aLogThatCannotBeReadIsAnErrorThatSaysWhy() async throws {
    let scratch = try Scratch()
    try FileManager.default.createDirectory(atPath: scratch.path("folder.jsonl"), withIntermediateDirectories: false)
    await #expect(
      throws: InspectorError("cannot read the log \(scratch.path("folder.jsonl")): it is a directory, not a file")
    ) {
      try await InspectorServer(logPath: scratch.path("folder.jsonl")).run { _ in Issue.record("listened") }
    }
    #expect(mkfifo(scratch.path("fifo.jsonl"), 0o600) == 0)
    await #expect(
      throws: InspectorError("cannot read the log \(scratch.path("fifo.jsonl")): it is a FIFO (named pipe), not a file")
    ) {
      try await InspectorServer(logPath: scratch.path("fifo.jsonl")).run { _ in Issue.record("listened") }
    }
  }
}

@Suite("The log is read once, then from where it was left")
struct LogCacheTests {
  @Test func linesAppendedAreAddedAndAFileInTheLogsPlaceIsReadWhole() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line(store: "a") + "\n" + Fixture.line(store: "b"))
    let cache = LogCache(path: log)
    #expect(try await cache.document().contains(#""lines":1,"partial":true"#))
    let handle = try #require(FileHandle(forWritingAtPath: log))
    handle.seekToEndOfFile()
    handle.write(Data(("\n" + Fixture.line(store: "c") + "\n").utf8))
    try handle.close()
    let grown = try await cache.document()
    #expect(grown.contains(#""lines":3,"partial":false"#))
    #expect(grown.components(separatedBy: #"{"line":"#).count == 4)
    #expect(grown.contains(#"{"line":2,"raw":"#) && grown.contains(#"\"store\":\"b\""#))
    // Another file, as long, renamed into the log's place.
    let other = try scratch.write("other.jsonl", String(repeating: "\n", count: grown.utf8.count))
    try scratch.write(
      "other.jsonl", Fixture.line(store: "x") + "\n" + Fixture.line(store: "y") + "\n" + Fixture.line(store: "z") + "\n"
    )
    #expect(rename(other, log) == 0)
    let replaced = try await cache.document()
    #expect(replaced.contains(#"\"store\":\"x\""#))
    #expect(!replaced.contains(#"\"store\":\"a\""#))
    // Cut short.
    try scratch.write("session.jsonl", Fixture.line(store: "q") + "\n")
    let cut = try await cache.document()
    #expect(cut.contains(#""lines":1,"#) && cut.contains(#"\"store\":\"q\""#))
  }
}

@Suite("The log read by many requests at once")
struct LogCacheConcurrencyTests {
  /// The line numbers of a document, in order.
  private func lineNumbers(_ document: String) throws -> [Int] {
    let object = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
    let entries = try #require(object["entries"] as? [[String: Any]])
    return entries.compactMap { $0["line"] as? Int }
  }

  @Test func requestsFromManyTasksWhileTheLogGrowsEachSeeWholeLinesInOrder() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", "")
    let cache = LogCache(path: log)
    let handle = try #require(FileHandle(forWritingAtPath: log))
    let lineCount = 300
    try await withThrowingTaskGroup(of: [[Int]].self) { group in
      group.addTask {
        try await blocking {
          for index in 0..<lineCount {
            // Half a line, then the rest: readers see it partial or whole, never twice.
            let line = Fixture.line(store: "s\(index)") + "\n"
            handle.write(Data(line.utf8.prefix(40)))
            handle.write(Data(line.utf8.dropFirst(40)))
          }
          return []
        }
      }
      for _ in 0..<4 {
        group.addTask {
          var seen: [[Int]] = []
          for _ in 0..<50 { seen.append(try self.lineNumbers(try await cache.document())) }
          return seen
        }
      }
      for try await results in group {
        for numbers in results {
          // 1, 2, 3, … with none missing or repeated.
          #expect(numbers == (0..<numbers.count).map { $0 + 1 })
        }
      }
    }
    try handle.close()
    #expect(try lineNumbers(try await cache.document()) == Array(1...lineCount))
  }

  @Test func linesCheckedOnEveryCoreComeBackInTheOrderOfTheFile() throws {
    let text = (1...2000).map { index in
      index % 97 == 0 ? "{broken \(index)" : Fixture.line(store: "s\(index)")
    }.joined(separator: "\n")
    let lines = LogLines(Array(text.utf8)[...], includePartialLine: true)
    #expect(lines.entries.count == 2000)
    for (index, entry) in lines.entries.enumerated() {
      #expect(entry.hasPrefix("{\"line\":\(index + 1),"))
      #expect(entry.contains((index + 1) % 97 == 0 ? "\"error\"" : "\\\"store\\\":\\\"s\(index + 1)\\\""))
    }
  }
}
