import FluxDevtools
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

/// A session as an app records it for tests (`fields: [.all, .swift]`, snapshots): a commit and
/// a cancel of store `counter`.
private enum Session {
  static let committed =
    #"{"action":{"add":{"_0":2}},"durationNanoseconds":2125,"outcome":"committed","state":2,"stateForm":"snapshot","#
    + #""stateType":"App.CounterState","store":"counter","swift":".add(2)","time":"2026-11-23T03:07:49.123Z"}"#
  static let cancelled =
    #"{"action":{"add":{"_0":-1}},"cancelledBy":"NoNegativeAmounts","outcome":"cancelled","#
    + #""stateType":"App.CounterState","store":"counter","swift":".add(-1)","time":"2026-11-23T03:07:50.000Z"}"#
  static let text = committed + "\n" + cancelled + "\n"
}

@Suite("--swift-test and Export as test: a session becomes a test file")
struct SessionTestExportTests {
  @Test("--swift-test writes the session's test, named after its file, and writes it again the same")
  func writesTheTest() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text)
    let file = scratch.path("CounterSessionTests.swift")
    let run = try await runInspector([log, "--swift-test", file])
    #expect(run.status == 0)
    #expect(run.output == "Wrote \(file): one test per store of the session.\n")
    #expect(run.error.isEmpty)
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.hasPrefix(SessionTest.marker))
    #expect(text.contains("struct CounterSessionTests {"))
    #expect(text.contains("@testable import App"))
    #expect(text.contains("await tester.dispatch(.add(2), sessionLine: 1, recorded: #\"2\"#)"))
    #expect(text.contains("middlewares: [AnyMiddleware(NoNegativeAmounts())]"))
    #expect(try await runInspector([log, "--swift-test", file]).status == 0)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
  }

  @Test("--final-state-only checks each store's state after its last committed action only")
  func finalStateOnly() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.committed + "\n" + Session.committed + "\n")
    let file = scratch.path("SessionTests.swift")
    #expect(try await runInspector([log, "--swift-test", file, "--final-state-only"]).status == 0)
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.contains("await tester.dispatch(.add(2), sessionLine: 1)"))
    #expect(text.contains("await tester.dispatch(.add(2), sessionLine: 2, recorded: #\"2\"#)"))
  }

  @Test("a log without what a test needs gives no file, and says what to record with")
  func logWithoutTheFields() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let file = scratch.path("SessionTests.swift")
    let run = try await runInspector([log, "--swift-test", file])
    #expect(run.status == 1)
    #expect(run.error.hasPrefix("flux-inspector: cannot write a test of \(log): no store of the session can be tested"))
    #expect(run.error.contains("counter, line 1: the log does not name the store's state type"))
    #expect(run.error.contains("fields: [.all, .swift]"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  @Test("a store that cannot be tested is left out, and said so; the others are written")
  func storeLeftOut() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text + Fixture.line(store: "other") + "\n")
    let file = scratch.path("SessionTests.swift")
    let run = try await runInspector([log, "--swift-test", file])
    #expect(run.status == 0)
    #expect(run.error.hasPrefix("flux-inspector: left out other, line 3: the log does not name the store's state type"))
    #expect(try String(contentsOfFile: file, encoding: .utf8).contains("// Left out: other, line 3"))
  }

  /// The log named as the test, however it is spelled.
  @Test(arguments: ["symlink", "hardlink"])
  func neverWritesOverTheLogItReads(spelling: String) async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text)
    let target = scratch.path("SessionTests.swift")
    if spelling == "symlink" {
      try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: log)
    } else {
      try FileManager.default.linkItem(atPath: log, toPath: target)
    }
    let run = try await runInspector([log, "--swift-test", target, "--force"])
    #expect(run.status == 1)
    #expect(run.error == "flux-inspector: cannot write \(target): it is the log \(log), which is read\n")
    #expect(try String(contentsOfFile: log, encoding: .utf8) == Session.text)
  }

  @Test("the log is never the test it writes, however its path is spelled; a link is replaced, not written through")
  func logUnderAnySpelling() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("SessionTests.swift", Session.text)
    let folder = scratch.url.path
    try FileManager.default.createSymbolicLink(atPath: scratch.path("via"), withDestinationPath: folder)
    for spelling in [
      log, folder + "/./SessionTests.swift", folder + "//SessionTests.swift", folder + "/via/SessionTests.swift",
    ] {
      let run = try await runInspector([spelling, "--swift-test", spelling, "--force"])
      #expect(run.status == 1, "\(spelling)")
      #expect(run.error.contains("it is the log"), "\(spelling): \(run.error)")
      #expect(try String(contentsOfFile: log, encoding: .utf8) == Session.text)
    }
    // A link to a test elsewhere: the link is replaced by the new test; what it pointed to stays.
    let elsewhere = try scratch.write("Elsewhere.swift", SessionTest.marker + ": old\n")
    try FileManager.default.createSymbolicLink(atPath: scratch.path("Linked.swift"), withDestinationPath: elsewhere)
    let other = try scratch.write("other.jsonl", Session.text)
    #expect(try await runInspector([other, "--swift-test", scratch.path("Linked.swift")]).status == 0)
    #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == SessionTest.marker + ": old\n")
    let linked = try FileManager.default.attributesOfItem(atPath: scratch.path("Linked.swift"))
    #expect(linked[.type] as? FileAttributeType == .typeRegular)
  }

  @Test("a file flux-inspector did not write is replaced only with --force; a folder or a bad name never")
  func replacesOnlyItsOwn() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text)
    let mine = try scratch.write("SessionTests.swift", "// My own tests.\nimport Testing\n")
    let refused = try await runInspector([log, "--swift-test", mine])
    #expect(refused.status == 1)
    #expect(refused.error.contains("it is not a test that flux-inspector wrote"))
    #expect(try String(contentsOfFile: mine, encoding: .utf8) == "// My own tests.\nimport Testing\n")
    #expect(try await runInspector([log, "--swift-test", mine, "--force"]).status == 0)
    #expect(try String(contentsOfFile: mine, encoding: .utf8).hasPrefix(SessionTest.marker))

    try FileManager.default.createDirectory(atPath: scratch.path("Folder.swift"), withIntermediateDirectories: false)
    let folder = try await runInspector([log, "--swift-test", scratch.path("Folder.swift")])
    #expect(folder.error == "flux-inspector: cannot write \(scratch.path("Folder.swift")): it is a folder\n")
    let badName = try await runInspector([log, "--swift-test", scratch.path("session-tests.swift")])
    #expect(badName.error.contains("a test file is named after its suite"))
    let missing = try await runInspector([log, "--swift-test", scratch.path("none/SessionTests.swift")])
    #expect(missing.error.contains("the folder \(scratch.path("none")) does not exist"))
    let left = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
    #expect(left == ["Folder.swift", "SessionTests.swift", "session.jsonl"])
  }

  @Test("--final-state-only and --force go with a file to write; --html and --swift-test do not go together")
  func options() throws {
    let test = try InspectorOptions(arguments: ["s.jsonl", "--swift-test", "T.swift", "--final-state-only", "--force"])
    #expect(test.swiftTestPath == "T.swift" && test.isFinalStateOnly && test.isForced)
    #expect(throws: InspectorError("--final-state-only goes with --swift-test FILE.swift")) {
      try InspectorOptions(arguments: ["s.jsonl", "--final-state-only"])
    }
    #expect(throws: InspectorError("--html and --swift-test write one file each: give one of them")) {
      try InspectorOptions(arguments: ["s.jsonl", "--swift-test", "T.swift", "--html", "r.html"])
    }
    #expect(throws: InspectorError("--swift-test needs the name of a file, not an empty one")) {
      try InspectorOptions(arguments: ["s.jsonl", "--swift-test", ""])
    }
  }

  @Test("GET /session-test.swift downloads the test the command writes; a log with no testable store gives 422 and why")
  func served() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text)
    let file = scratch.path("SessionTests.swift")
    #expect(try await runInspector([log, "--swift-test", file]).status == 0)
    try await withServer(logPath: log) { port throws in
      let reply = try await fetch("/session-test.swift", port: port)
      #expect(reply.status == 200)
      #expect(reply.header("content-type") == "text/x-swift; charset=utf-8")
      #expect(reply.header("content-disposition") == #"attachment; filename="SessionTests.swift""#)
      #expect(reply.body == (try String(contentsOfFile: file, encoding: .utf8)))
    }
    let bare = try scratch.write("bare.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: bare) { port throws in
      let reply = try await fetch("/session-test.swift", port: port)
      #expect(reply.status == 422)
      #expect(reply.body.contains("no store of the session can be tested"))
      #expect(reply.body.contains("fields: [.all, .swift]"))
    }
  }

  @Test(
    "a write that fails past the file-size limit is reported; the test that was there stays whole, nothing is left aside"
  )
  func writeFailsPastTheSizeLimit() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text)
    let file = scratch.path("SessionTests.swift")
    #expect(try await runInspector([log, "--swift-test", file]).status == 0)
    let old = try String(contentsOfFile: file, encoding: .utf8)
    let long = (1...60).map { _ in Session.committed }.joined(separator: "\n") + "\n"
    let bigLog = try scratch.write("big.jsonl", long)
    // With SIGXFSZ as a shell gives it, not as this process may pass it on (blocked, or ignored):
    // a write past the limit would end the program, unless it ignores the signal itself.
    let defaultSignal =
      "import os, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "
      + "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGXFSZ]); os.execv(sys.argv[1], sys.argv[1:])"
    let run = try await runProcess(
      "/usr/bin/env",
      ["python3", "-c", defaultSignal, "/usr/bin/prlimit", "--fsize=4096"]
        + [inspectorExecutable.path, bigLog, "--swift-test", file])
    #expect(run.status == 1)
    #expect(run.error == "flux-inspector: cannot write \(file): file too large\n")
    #expect(try String(contentsOfFile: file, encoding: .utf8) == old)
    let left = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
    #expect(left == ["SessionTests.swift", "big.jsonl", "session.jsonl"])
  }

  @Test("a pipe where the test goes is not replaced, even with --force")
  func notAFile() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Session.text)
    let pipe = scratch.path("SessionTests.swift")
    #expect(mkfifo(pipe, 0o644) == 0)
    let run = try await runInspector([log, "--swift-test", pipe, "--force"])
    #expect(run.error == "flux-inspector: cannot write \(pipe): it is not a file\n")
  }
}

/// Runs `executable` with `arguments` until it exits: its exit status, and what it wrote.
private func runProcess(_ executable: String, _ arguments: [String]) async throws
  -> (status: Int32, output: String, error: String)
{
  try await blocking {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
      process.terminationStatus, String(decoding: outputData, as: UTF8.self),
      String(decoding: errorData, as: UTF8.self)
    )
  }
}

/// A live session's lines, as an app sends them, become a test file as a log's do.
@Suite("Export as test of a live session")
struct LiveSessionTestExportTests {
  @Test("the page's Export as test of an app session downloads the test of the lines the app sent")
  func aLiveSessionBecomesATest() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      for (n, line) in [Session.committed, Session.cancelled].enumerated() {
        app.send(#"{"type":"line","n":\#(n),"line":\#(line)}"#)
      }
      #expect(
        try await eventually {
          let list = object(try await fetch("/live/sessions", port: server.port).body)
          return (list["sessions"] as? [[String: Any]])?.first?["lines"] as? Int == 2
        })
      let reply = try await fetch("/live/session-test.swift?session=1", port: server.port)
      #expect(reply.status == 200)
      #expect(reply.header("content-disposition") == #"attachment; filename="SessionTests.swift""#)
      let expected = try SessionTest(
        Recording(jsonLines: Session.text), source: "the live session of todo, process 77", name: "SessionTests")
      #expect(reply.body == expected.text)
      #expect(reply.body.contains(".add(2)") && reply.body.contains(".add(-1)"))

      let missing = try await fetch("/live/session-test.swift?session=9", port: server.port)
      #expect(missing.status == 404)
      let unreadable = try await fetch("/live/session-test.swift?session=x", port: server.port)
      #expect(unreadable.status == 400)
    }
  }

  @Test("a live session whose lines lack what a test needs is answered with what the app must record")
  func aLiveSessionWithoutTypesSaysWhatIsMissing() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.line(0)
      #expect(
        try await eventually {
          let list = object(try await fetch("/live/sessions", port: server.port).body)
          return (list["sessions"] as? [[String: Any]])?.first?["lines"] as? Int == 1
        })
      let reply = try await fetch("/live/session-test.swift?session=1", port: server.port)
      #expect(reply.status == 422)
      #expect(reply.body.contains("fields: [.all, .swift]"))
    }
  }
}
