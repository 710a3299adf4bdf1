import Foundation
import Testing

@testable import FluxInspector

/// Writes `text` over the file at `path` in place: the same file (the same inode), as
/// `cp other.jsonl session.jsonl` does.
private func rewriteInPlace(_ path: String, _ text: String) throws {
  let handle = try #require(FileHandle(forWritingAtPath: path))
  try handle.truncate(atOffset: 0)
  handle.write(Data(text.utf8))
  try handle.close()
}

private func lines(_ stores: [String]) -> String {
  stores.map { Fixture.line(store: $0) + "\n" }.joined()
}

/// The stores of the entries of a document, in order.
private func stores(_ document: ServedDocument) -> [String] {
  document.entries.map { entry in
    let raw = entry["raw"] as? String ?? ""
    let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any]
    return object?["store"] as? String ?? "error at line \(entry["line"] ?? "?")"
  }
}

@Suite("A log written over, in place or by another file, is read again from its start")
struct ChangedLogTests {
  @Test func aLogRewrittenInPlaceWhileItIsFollowedMakesThePageReloadNotMixLines() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["a1", "a2", "a3"]))
    try await withServer(logPath: log) { port throws in
      let document = try ServedDocument(try await fetch("/log", port: port).body)
      let events = try Connection(port: port)
      events.send(document.eventsTarget)
      #expect(await events.read(until: "retry:").contains("text/event-stream"))
      // Another session, longer, copied over the log: the same inode, other bytes before the
      // offset the page follows from.
      try rewriteInPlace(log, lines(["b1", "b2", "b3", "b4", "b5"]))
      let received = await events.read(until: "event: reset")
      #expect(received.contains("event: reset"))
      #expect(!received.contains("event: lines"), "\(received)")
    }
  }

  @Test func theLogRewrittenInPlaceIsServedWholeWithNothingOfTheOldOne() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["a1", "a2", "a3"]))
    try await withServer(logPath: log) { port throws in
      let before = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(stores(before) == ["a1", "a2", "a3"])
      try rewriteInPlace(log, lines(["b1", "b2", "b3", "b4", "b5"]))
      let after = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(stores(after) == ["b1", "b2", "b3", "b4", "b5"])
    }
  }

  @Test func aPageThatReconnectsToANewServerAfterTheLogChangedIsToldToReload() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["a1", "a2", "a3"]))
    // The page loads the log from one server…
    let document = try await withServer(logPath: log) { port throws in
      try ServedDocument(try await fetch("/log", port: port).body)
    }
    // …which stops; the log changes in place; another server starts, and the page reconnects
    // from where it was.
    try rewriteInPlace(log, lines(["b1", "b2", "b3", "b4", "b5"]))
    try await withServer(logPath: log) { port throws in
      let events = try Connection(port: port)
      events.send(document.eventsTarget)
      let received = await events.read(until: "event: reset")
      #expect(received.contains("event: reset"))
      #expect(!received.contains("event: lines"), "\(received)")
    }
  }

  @Test func aPageThatReconnectsToTheLogItKnowsGoesOnWhereItWas() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["a1", "a2"]))
    let document = try await withServer(logPath: log) { port throws in
      try ServedDocument(try await fetch("/log", port: port).body)
    }
    let handle = try #require(FileHandle(forWritingAtPath: log))
    handle.seekToEndOfFile()
    handle.write(Data(lines(["a3"]).utf8))
    try handle.close()
    try await withServer(logPath: log) { port throws in
      let events = try Connection(port: port)
      events.send(document.eventsTarget)
      let event = await events.event("event: lines")
      #expect(event.contains(#"{"line":3,"raw":"#) && event.contains(#"\"store\":\"a3\""#), "\(event)")
      #expect(!event.contains(#""line":1,"#) && !event.contains("reset"))
    }
  }

  @Test func eachDocumentAndEventNamesOneIdentityWhileTheFileGrowsAndAnotherForAnotherFile() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["a1"]))
    try await withServer(logPath: log) { port throws in
      let document = try ServedDocument(try await fetch("/log", port: port).body)
      let identity = try #require(document.object["identity"] as? String)
      let events = try Connection(port: port)
      events.send(document.eventsTarget)
      await events.read(until: "retry:")
      let handle = try #require(FileHandle(forWritingAtPath: log))
      handle.seekToEndOfFile()
      handle.write(Data(lines(["a2"]).utf8))
      try handle.close()
      let event = await events.event("event: lines")
      let data = try #require(event.split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst(6))
      let grown = try ServedDocument(String(data))
      #expect(grown.object["lines"] as? Int == 2)
      #expect(grown.object["end"] as? Int == lines(["a1", "a2"]).utf8.count)
      #expect(grown.object["identity"] as? String == identity)
      // The page follows on from there, on this server or the next.
      let again = try Connection(port: port)
      again.send(grown.eventsTarget)
      let head = await again.read(until: "retry:")
      #expect(head.hasPrefix("HTTP/1.1 200") && !head.contains("reset"), "\(head)")
      // Another session at the log's path, with the same first bytes up to its first line break.
      try rewriteInPlace(log, lines(["a1", "b2", "b3"]))
      let rewritten = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(stores(rewritten) == ["a1", "b2", "b3"])
      let other = try scratch.write("other.jsonl", lines(["c1"]))
      #expect(rename(other, log) == 0)
      let replaced = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(replaced.object["identity"] as? String != identity)
    }
  }

  /// A page that asks to follow from the middle of a line, however it got that offset.
  @Test func followingFromAnOffsetThatIsNotTheStartOfALineIsAReset() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["a1", "a2"]))
    try await withServer(logPath: log) { port throws in
      let document = try ServedDocument(try await fetch("/log", port: port).body)
      let identity = try #require(document.object["identity"] as? String)
      let events = try Connection(port: port)
      events.send("/events?from=7&line=2&identity=\(identity)")
      let received = await events.read(until: "event: reset")
      #expect(received.contains("event: reset") && !received.contains("event: lines"), "\(received)")
    }
  }
}

/// The log lives at its own path, where its writer appends to it: the inspector reads that file
/// and names it, and looks at nothing else in its folder.
@Suite("The inspector reads the file it was given")
struct GivenFileTests {
  @Test func aNewerFileBesideTheLogIsNeverReadInItsPlace() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", lines(["given"]))
    var past = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, log, &past, 0) == 0)
    try scratch.write("session.jsonl.partial-k3x", lines(["beside"]))
    try await withServer(logPath: log) { port throws in
      let document = try ServedDocument(try await fetch("/log", port: port).body)
      #expect(stores(document) == ["given"])
      #expect(document.object["path"] as? String == log)
    }
    let report = scratch.path("report.html")
    let run = try await runInspector([log, "--html", report])
    #expect(run.status == 0, "\(run.error)")
    let html = try String(contentsOfFile: report, encoding: .utf8)
    #expect(html.contains(#"\"store\":\"given\""#))
    #expect(!html.contains(#"\"store\":\"beside\""#))
  }

  @Test func nothingAtThePathIsAnErrorEvenWithARecordingBesideIt() async throws {
    let scratch = try Scratch()
    try scratch.write("session.jsonl.partial-k3x", lines(["beside"]))
    let log = scratch.path("session.jsonl")
    let message = "no log at \(log): no such file"
    let run = try await runInspector([log, "--html", scratch.path("report.html")])
    #expect(run.status == 1)
    #expect(run.error == "flux-inspector: \(message)\n")
    // A server that found a log to serve would serve until it is stopped.
    let ending = try await withThrowingTaskGroup(of: String.self) { group in
      group.addTask {
        do throws(InspectorError) {
          try await InspectorServer(logPath: log).run { _ in }
          return "stopped"
        } catch {
          return error.message
        }
      }
      group.addTask {
        try await Task.sleep(for: .seconds(30))
        return "served for 30 seconds"
      }
      let first = try await group.next()!
      group.cancelAll()
      return first
    }
    #expect(ending == message)
  }
}

@Suite("A log larger than the inspector reads")
struct LargeLogTests {
  /// A file of 3 GiB that takes no room on the disk: read whole, it would not fit in the memory
  /// that the server may have.
  @Test func aLogLargerThanTheInspectorReadsIsAnErrorAndTheServerKeepsServing() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    #expect(truncate(log, 3 << 30) == 0)
    let server = try await ServerProcess([log], addressSpace: 2 << 30)
    let reply = try await fetch("/log", port: server.port, patience: 60)
    #expect(reply.status == 503, "\(reply.status): \(reply.body.prefix(200))")
    #expect(
      reply.body
        == "cannot read the log \(log): it has 3221225472 bytes to read, more than the 1 GiB (1073741824 bytes) that the inspector reads"
    )
    #expect(server.isRunning, "the server stopped: \(server.ending)")
    #expect(try await fetch("/", port: server.port).status == 200)
  }
}
