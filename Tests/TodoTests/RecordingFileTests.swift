import FluxDevtools
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `--record` writes its log at its path as the session goes (rule 17): a session ended by a
/// signal leaves every line there, and one file has one writer at a time, across processes.
@Suite("Recording to a file", .serialized)
struct RecordingFileTests {
  static let oldLog =
    #"{"action":{"create":{"name":"Old"}},"outcome":"committed","store":"board","time":"2026-11-23T03:07:49.123Z"}"#
    + "\n"

  @Test(
    "item 19: todo --record ended by SIGINT, SIGTERM or SIGHUP leaves every whole line at the path, the old log beside it",
    arguments: [SIGINT, SIGTERM, SIGHUP])
  func inv17_recordingEndedBySignalKeepsEveryLine(signal: Int32) throws {
    let folder = try Faults.temporaryFolder("signal-log")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("s.jsonl")
    try Data(Self.oldLog.utf8).write(to: log)
    let todo = try RunningTodo(["--record", "s.jsonl"], in: folder)
    todo.send("add Milk\nadd Eggs\nnew Work\n")
    #expect(todo.waitForOutput("Work — empty"))
    let status = todo.end(by: signal)
    #expect(status == .signalled(signal))
    let recording = try Recording(contentsOf: log)
    #expect(recording.entries.map(\.store) == ["list:Inbox", "list:Inbox", "board"])
    #expect(Faults.contents(folder.appendingPathComponent("s.jsonl.1")) == Data(Self.oldLog.utf8))
    #expect(Faults.files(in: folder, startingWith: "s.jsonl") == ["s.jsonl", "s.jsonl.1"])
  }

  @Test("rule 17: a recording killed with -9 while it writes leaves every whole line readable at the path")
  func inv17_killedWhileWritingKeepsEveryWholeLine() throws {
    let folder = try Faults.temporaryFolder("killed-writing")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("s.jsonl")
    let todo = try RunningTodo(["--record", "s.jsonl"], in: folder)
    // Each line holds the list after the commit: the lines grow, so the log is being written
    // when the kill comes.
    let title = String(repeating: "x", count: 200)
    todo.send((1...400).map { "add \($0) \(title)\n" }.joined())
    #expect(todo.waitForOutput("150. [ ] 150 "))
    #expect(todo.end(by: SIGKILL) == .signalled(SIGKILL))
    let recording = try Recording(contentsOf: log, allowingCutShortLastLine: true)
    #expect(recording.entries.count >= 150)
    #expect(recording.entries.allSatisfy { $0.store == "list:Inbox" })
  }

  @Test(
    "rule 17: a second todo recording to the file another todo records to is refused, and moves nothing; once that one is killed, the next opens"
  )
  func inv17_secondProcessOnOneLogIsRefused() throws {
    let folder = try Faults.temporaryFolder("two-writers")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("s.jsonl")
    let first = try RunningTodo(["--record", "s.jsonl"], in: folder)
    first.send("add Milk\n")
    #expect(first.waitForOutput("1. [ ] Milk"))
    let second = try Faults.run(["--record", "s.jsonl"], input: "add Eggs\n", in: folder)
    #expect(second.status == 65)
    #expect(
      second.errors.contains(
        "todo: cannot record to s.jsonl: another action log is writing to it (in this process or another); only one may"
      ))
    #expect(Faults.files(in: folder, startingWith: "s.jsonl") == ["s.jsonl"])
    first.send("add Jam\n")
    #expect(first.waitForOutput("2. [ ] Jam"))
    // Killed: the system gives its hold on the file back, and leaves its lines.
    #expect(first.end(by: SIGKILL) == .signalled(SIGKILL))
    let firstLines = try #require(Faults.contents(log))
    #expect(try Recording(contentsOf: log).entries.count == 2)
    let third = try Faults.run(["--record", "s.jsonl"], input: "add Eggs\n", in: folder)
    #expect(third.status == 0)
    #expect(third.output.contains("the file that was there is kept as s.jsonl.1"))
    #expect(Faults.contents(folder.appendingPathComponent("s.jsonl.1")) == firstLines)
    #expect(try Recording(contentsOf: log).entries.count == 1)
  }

  @Test(
    "rule 17: todo --flight-recorder N ended by SIGINT, SIGTERM or SIGHUP writes exactly the last N actions, then ends by that signal",
    arguments: [SIGINT, SIGTERM, SIGHUP])
  func inv17_flightRecorderEndedBySignalWritesTheLastActions(signal: Int32) throws {
    let folder = try Faults.temporaryFolder("signal-flight")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("flight-record.jsonl")
    try Data(Self.oldLog.utf8).write(to: log)
    let todo = try RunningTodo(["--flight-recorder", "2"], in: folder)
    todo.send("add Milk\nadd Eggs\nnew Work\nadd Tea\n")
    #expect(todo.waitForOutput("1. [ ] Tea"))
    #expect(todo.end(by: signal) == .signalled(signal))
    let text = try #require(Faults.contents(log))
    #expect(String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).count == 3)
    let recording = try Recording(contentsOf: log)
    #expect(recording.entries.map(\.store) == ["board", "list:Work"])
    #expect(Faults.contents(folder.appendingPathComponent("flight-record.jsonl.1")) == Data(Self.oldLog.utf8))
    #expect(
      Faults.files(in: folder, startingWith: "flight-record.jsonl") == [
        "flight-record.jsonl", "flight-record.jsonl.1",
      ])
  }

  @Test(
    "rule 17: todo --flight-recorder N killed with -9 leaves what an earlier write left, whole: the last session's record, kept aside"
  )
  func inv17_flightRecorderKilledLeavesTheEarlierRecord() throws {
    let folder = try Faults.temporaryFolder("killed-flight")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("flight-record.jsonl")
    let first = try RunningTodo(["--flight-recorder", "2"], in: folder)
    first.send("add Milk\nadd Eggs\nadd Tea\n")
    #expect(first.waitForOutput("3. [ ] Tea"))
    #expect(first.end(by: SIGTERM) == .signalled(SIGTERM))
    let written = try #require(Faults.contents(log))
    #expect(try Recording(contentsOf: log).entries.count == 2)
    let second = try RunningTodo(["--flight-recorder", "2"], in: folder)
    // Enough actions for the ring to go round many times: none of them is written before the kill.
    let title = String(repeating: "x", count: 200)
    second.send((1...300).map { "add \($0) \(title)\n" }.joined())
    #expect(second.waitForOutput("150. [ ] 150 "))
    #expect(second.end(by: SIGKILL) == .signalled(SIGKILL))
    #expect(Faults.contents(folder.appendingPathComponent("flight-record.jsonl.1")) == written)
    #expect(Faults.contents(log) == Data())
    #expect(try Recording(contentsOf: log).entries.isEmpty)
  }

  /// Root opens any file whatever its permission bits: the program runs as another user
  /// (`setpriv`, nobody).
  @Test(
    "rule 17: --record where its user may not write, or over a file its user cannot open, says why and moves nothing")
  func inv17_recordingWithoutPermission() throws {
    guard Faults.isLinux else { return }
    guard Faults.isRoot else {
      print("skipped: running the program as another user needs root")
      return
    }
    let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    let folder = try Faults.temporaryFolder("log-permission")
    defer { try? FileManager.default.removeItem(at: folder) }
    chmod(folder.path, 0o755)  // nobody may not write here
    let denied = try Faults.run(["--record", "s.jsonl"], input: "add Milk\n", in: folder, through: nobody)
    #expect(denied.status == 65)
    #expect(denied.errors.contains("todo: cannot record to s.jsonl: permission denied"))
    #expect(Faults.files(in: folder, startingWith: "s.jsonl") == [])
    chmod(folder.path, 0o777)
    let log = folder.appendingPathComponent("s.jsonl")
    try Data(Self.oldLog.utf8).write(to: log)
    chmod(log.path, 0o000)
    let unreadable = try Faults.run(["--record", "s.jsonl"], input: "add Milk\n", in: folder, through: nobody)
    #expect(unreadable.status == 65)
    #expect(
      unreadable.errors.contains(
        "todo: cannot record to s.jsonl: the file there cannot be opened to check that no other log writes to it: permission denied"
      ))
    #expect(Faults.files(in: folder, startingWith: "s.jsonl") == ["s.jsonl"])
    #expect(Faults.contents(log) == Data(Self.oldLog.utf8))
  }
}

/// A `todo` program that runs while the test talks to it through its standard input.
private final class RunningTodo: @unchecked Sendable {
  enum Status: Equatable {
    case exited(Int32)
    case signalled(Int32)
  }

  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  // Read only by the test's thread.
  private var seen = ""

  init(_ arguments: [String], in folder: URL) throws {
    process.executableURL = Faults.todo
    process.arguments = arguments
    process.currentDirectoryURL = folder
    process.environment = ProcessInfo.processInfo.environment.merging(
      ["ASAN_OPTIONS": "detect_leaks=0", "SWIFT_BACKTRACE": "enable=no"]) { $1 }
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try Self.runWithSignalsUnblocked(process)
    // A program that never prints what a test waits for would keep the test waiting: it is
    // stopped after two minutes, which ends the wait (and fails the test).
    let process = self.process
    DispatchQueue.global().asyncAfter(deadline: .now() + 120) {
      if process.isRunning { process.terminate() }
    }
  }

  /// Starts `process` as a shell would, with no signal blocked: a child inherits the mask of
  /// the thread that starts it, and the test runner's threads block most signals, which would
  /// keep the child from ever seeing the one a test sends.
  private static func runWithSignalsUnblocked(_ process: Process) throws {
    let started = Started()
    let thread = Thread {
      var none = sigset_t()
      sigemptyset(&none)
      pthread_sigmask(SIG_SETMASK, &none, nil)
      started.set(Result { try process.run() })
    }
    thread.start()
    try started.wait().get()
  }

  func send(_ text: String) {
    input.fileHandleForWriting.write(Data(text.utf8))
  }

  /// Reads what it prints until `text` appears; `false` if it ends first.
  func waitForOutput(_ text: String) -> Bool {
    while !seen.contains(text) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { return false }
      seen += String(decoding: chunk, as: UTF8.self)
    }
    return true
  }

  /// Sends `signal`, and waits for the program to end.
  func end(by signal: Int32) -> Status {
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    return process.terminationReason == .uncaughtSignal
      ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
  }
}

/// The outcome of starting a program on another thread.
private final class Started: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  // Written once, before `done` is signalled; read after it is waited for.
  private var outcome: Result<Void, any Error>?

  func set(_ outcome: Result<Void, any Error>) {
    self.outcome = outcome
    done.signal()
  }

  func wait() -> Result<Void, any Error> {
    done.wait()
    return outcome!
  }
}
