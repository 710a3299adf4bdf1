import FluxDevtools
import Foundation
import Testing

@testable import FluxInspector

/// A line whose state was written through `Mirror` (`"stateMirror"`, of `snapshots: .mirror`): the
/// server serves it as a line like any other, for the page to show read-only, and refuses a test
/// of it, saying why.
@Suite("Mirror snapshots: served to be looked at, never taken for a state")
struct MirrorSnapshotServerTests {
  /// A committed line of "counter" with a Mirror snapshot and the fields of `.swift`.
  static let line = Fixture.line(
    extra: #""sequence":1,"stateForm":"mirror","stateMirror":{"fields":{"count":{"fields":{"value":2},"id":2,"#
      + #""kind":"class","type":"Variable<Int>"},"seen":{"kind":"ref","type":"CounterState","id":1}},"id":1,"#
      + #""kind":"class","type":"CounterState"},"stateType":"App.CounterState","swift":".add(2)","#)

  @Test("GET /log serves a line with a Mirror snapshot whole, as a line that reads, with no error")
  func mirrorLineIsServed() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Self.line + "\n" + Fixture.line(extra: #""state":3,"#) + "\n")
    try await withServer(logPath: log) { port throws in
      let reply = try await fetch("/log", port: port)
      #expect(reply.status == 200)
      let document = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
      let entries = try #require(document["entries"] as? [[String: Any]])
      #expect(entries.count == 2)
      #expect(entries[0]["error"] == nil)
      #expect(entries[0]["raw"] as? String == Self.line)
    }
  }

  @Test("GET /session-test.swift and --swift-test refuse a session whose states are Mirror snapshots, and say why")
  func sessionTestOfMirrorSnapshotsIsRefused() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Self.line + "\n")
    try await withServer(logPath: log) { port throws in
      let reply = try await fetch("/session-test.swift", port: port)
      #expect(reply.status == 422)
      #expect(reply.body.contains("its state is a Mirror snapshot (`snapshots: .mirror`), which a test cannot compare"))
    }
    let file = scratch.path("SessionTests.swift")
    let run = try await runInspector([log, "--swift-test", file])
    #expect(run.status == 1)
    #expect(run.error.contains("counter, line 1: its state is a Mirror snapshot"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }
}
