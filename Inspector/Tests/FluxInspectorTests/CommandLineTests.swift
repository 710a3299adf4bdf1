import FluxInspector
import Foundation
import Testing

@Suite("flux-inspector on the command line")
struct CommandLineTests {
  @Test func optionsAreRead() throws {
    let options = try InspectorOptions(arguments: [
      "s.jsonl", "--port", "8080", "--host", "0.0.0.0", "--html", "r.html",
    ])
    #expect(options.logPath == "s.jsonl")
    #expect(options.port == 8080)
    #expect(options.host == "0.0.0.0")
    #expect(options.htmlPath == "r.html")
    let defaults = try InspectorOptions(arguments: ["s.jsonl"])
    #expect(defaults.port == 0)
    #expect(defaults.host == "127.0.0.1")
    #expect(defaults.htmlPath == nil)
    #expect(defaults.appsPort == 0)
    #expect(defaults.listenAddress == nil)
  }

  @Test func withNoLogTheInspectorShowsTheAppsThatConnect() throws {
    let options = try InspectorOptions(arguments: ["--apps-port", "9400", "--listen", "0.0.0.0"])
    #expect(options.logPath == nil)
    #expect(options.appsPort == 9400)
    #expect(options.listenAddress == "0.0.0.0")
  }

  @Test func inLiveModeTheProgramPrintsWhereAppsConnectAndWithListenThePairingCode() async throws {
    let loopback = try await ServerProcess([])
    #expect(loopback.pairingCode == nil)
    #expect(try await fetch("/live/sessions", port: loopback.port).body == #"{"file":null,"sessions":[]}"#)
    #expect(try await fetch("/log", port: loopback.port).status == 404)
    let listening = try await ServerProcess(["--listen", "127.0.0.1"])
    #expect(listening.pairingCode?.count == 9)
  }

  @Test(
    "Wrong arguments are one-line errors",
    arguments: [
      (["--html", "r.html"], "which log? --html writes the page of a log: give its path"),
      (["--apps-port", "-1"], "--apps-port needs a number from 0 to 65535, not -1"),
      (["--listen", ""], "--listen needs an address, not an empty one"),
      (["--listen"], "--listen needs a value"),
      (["s.jsonl", "--port", "70000"], "--port needs a number from 0 to 65535, not 70000"),
      (["s.jsonl", "--port"], "--port needs a value"),
      (["s.jsonl", "--verbose"], "unknown option --verbose"),
      (["a.jsonl", "b.jsonl"], "one log only: a.jsonl and b.jsonl"),
    ])
  func wrongArgumentsAreErrors(arguments: [String], message: String) {
    #expect(throws: InspectorError(message)) { try InspectorOptions(arguments: arguments) }
  }

  @Test func aMissingLogExitsWithOneLineAndAnError() async throws {
    let scratch = try Scratch()
    let run = try await runInspector([scratch.path("missing.jsonl")])
    #expect(run.status == 1)
    #expect(run.error == "flux-inspector: no log at \(scratch.path("missing.jsonl")): no such file\n")
    #expect(run.output.isEmpty)
  }

  @Test func aPortInUseExitsWithOneLineAndAnError() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let run = try await runInspector([log, "--port", "\(port)"])
      #expect(run.status == 1)
      #expect(
        run.error
          == "flux-inspector: cannot listen on 127.0.0.1:\(port): the port is in use; give another with --port, or none\n"
      )
    }
  }

  @Test func theProgramPrintsItsAddressAndServes() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let process = Process()
    process.executableURL = inspectorExecutable
    process.arguments = [log]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    defer {
      process.interrupt()
      process.waitUntilExit()
    }
    let reader = output.fileHandleForReading
    let printed = try await blocking {
      var printed = Data()
      while !printed.contains(UInt8(ascii: "\n")) {
        let chunk = reader.availableData
        if chunk.isEmpty { break }
        printed += chunk
      }
      return printed
    }
    let line = String(String(decoding: printed, as: UTF8.self).prefix { $0 != "\n" })
    #expect(line.hasPrefix("Flux Inspector: http://127.0.0.1:"))
    #expect(line.hasSuffix("/ (\(log))"))
    let port = try #require(Int(line.split(separator: ":")[3].prefix { $0.isNumber }))
    #expect(try await fetch("/log", port: port).body.contains(#""line":1"#))
  }

  @Test func theProgramStopsOnSIGINTWhileAPageFollowsTheLog() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let process = Process()
    process.executableURL = inspectorExecutable
    process.arguments = [log]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let reader = output.fileHandleForReading
    let line = try await blocking { String(decoding: reader.availableData, as: UTF8.self) }
    let port = try #require(Int(line.split(separator: ":")[3].prefix { $0.isNumber }))
    let document = try ServedDocument(try await fetch("/log", port: port).body)
    let events = try Connection(port: port)
    events.send(document.eventsTarget)
    #expect(await events.read(until: "retry:").contains("text/event-stream"))
    process.interrupt()
    // Not a measure of speed: a server that waits for the page to go never stops.
    let stopped = try await blocking {
      let deadline = Date().addingTimeInterval(60)
      while process.isRunning && Date() < deadline { usleep(50_000) }
      return !process.isRunning
    }
    // It would not stop on SIGTERM either, for the same reason.
    if !stopped { kill(process.processIdentifier, SIGKILL) }
    #expect(stopped, "the server still ran a minute after SIGINT")
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
  }

  @Test func htmlWritesOneSelfContainedFile() async throws {
    let scratch = try Scratch()
    let sneaky = Fixture.line(action: #"{"rename":{"_0":"</script><script>alert(1)</script>"}}"#)
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n" + sneaky + "\n{broken\n")
    let report = scratch.path("report.html")
    // An earlier report of another log is replaced.
    let older = try scratch.write("older.jsonl", Fixture.line(store: "older") + "\n")
    #expect(try await runInspector([older, "--html", report]).status == 0)
    let run = try await runInspector([log, "--html", report])
    #expect(run.status == 0)
    #expect(run.output == "Wrote \(report): open it in a browser.\n")
    let html = try String(contentsOfFile: report, encoding: .utf8)
    #expect(!html.contains(#"src="inspector.js""#))
    #expect(!html.contains(#"src="diff.js""#))
    #expect(!html.contains(#"src="costs.js""#))
    #expect(html.contains("root.FluxDiff") && html.contains("root.FluxCosts"))
    #expect(!html.contains(#"href="inspector.css""#))
    #expect(html.contains("<style>"))
    #expect(html.contains(#"<script id="flux-log" type="application/json">"#))
    #expect(html.contains("EventSource"))
    // The data cannot end its script element: every "<" in it is escaped. The page's own
    // scripts are its diff, its list of the slowest commits, and its script.
    #expect(html.components(separatedBy: "</script>").count == 5)
    #expect(html.contains(#"\u003cscript>alert(1)"#))
    #expect(html.contains(#""line":3,"error":"#))
    #expect(!html.contains(#"\"store\":\"older\""#))
    // Nothing else is left in the folder: the file was written aside and renamed.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted() == [
        "older.jsonl", "report.html", "session.jsonl",
      ])
  }

  @Test func htmlToAFolderThatIsNotThereFailsInWords() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let run = try await runInspector([log, "--html", scratch.path("nowhere/report.html")])
    #expect(run.status == 1)
    #expect(
      run.error
        == "flux-inspector: cannot write \(scratch.path("nowhere/report.html")): the folder \(scratch.path("nowhere")) does not exist\n"
    )
  }
}
