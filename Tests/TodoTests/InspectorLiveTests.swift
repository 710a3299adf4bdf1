import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `todo` with `FLUX_INSPECTOR` set: the real program, connected over a real socket to an
/// inspector of the test's.
@Suite("todo and a live inspector", .serialized)
struct InspectorLiveTests {
  @Test("todo connects when FLUX_INSPECTOR is set: a jump, a dispatch, a skip and an unskip change what it prints")
  func steered() throws {
    let inspector = try LiveInspector()
    let folder = try Faults.temporaryFolder("live")
    defer { try? FileManager.default.removeItem(at: folder) }
    let todo = try LiveTodo(in: folder, environment: ["FLUX_INSPECTOR": "127.0.0.1:\(inspector.port)"])
    todo.send("add Milk\nadd Eggs\nadd Bread\n")
    #expect(inspector.waitUntil { inspector.lines.count == 3 })
    let hello = try #require(inspector.messages(ofType: "hello").first)
    #expect(hello["app"] as? String == "todo")
    // The hello names the stores made by then; a `stores` message names them as they come.
    let announced = inspector.messages.filter { ["hello", "stores"].contains($0["type"] as? String) }
    let stores = try #require(announced.last?["stores"] as? [[String: Any]])
    #expect(stores.map { $0["label"] as? String } == ["board", "list:Inbox"])
    #expect(stores.map { $0["steerable"] as? Bool } == [false, true])

    let jump = inspector.command("\"store\":\"list:Inbox\",\"command\":\"jump\",\"to\":0")
    #expect(jump?["ok"] as? Bool == true, "\(jump ?? [:])")
    #expect(todo.waitForOutput("Inspector: jumped list:Inbox to after #0\nInbox — 0 of 1 done\n  1. [ ] Milk\n"))
    let dispatch = inspector.command(
      "\"store\":\"list:Inbox\",\"command\":\"dispatch\",\"action\":{\"add\":{\"title\":\"Jam\"}}")
    #expect(dispatch?["ok"] as? Bool == true)
    let wrong = inspector.command(
      "\"store\":\"list:Inbox\",\"command\":\"dispatch\",\"action\":{\"add\":{\"title\":3}}")
    #expect(wrong?["error"] as? String == "the action is not a TodoAction (\"add.title\" is not a string)")
    let present = inspector.command("\"store\":\"list:Inbox\",\"command\":\"present\"")
    #expect(present?["ok"] as? Bool == true)
    todo.send("show\n")
    #expect(
      todo.waitForOutput(
        "Inbox> show\nInbox — 0 of 4 done\n  1. [ ] Milk\n  2. [ ] Eggs\n  3. [ ] Bread\n  4. [ ] Jam\n"))
    let skip = inspector.command("\"store\":\"list:Inbox\",\"command\":\"skip\",\"at\":1")
    #expect(skip?["ok"] as? Bool == true)
    todo.send("show\n")
    #expect(todo.waitForOutput("Inbox> show\nInbox — 0 of 3 done\n  1. [ ] Milk\n  2. [ ] Bread\n  3. [ ] Jam\n"))
    _ = inspector.command("\"store\":\"list:Inbox\",\"command\":\"unskip\",\"at\":1")
    todo.send("show\n")
    #expect(todo.waitForOutput("Inbox> show\nInbox — 0 of 4 done\n  1. [ ] Milk\n  2. [ ] Eggs\n"))
    let board = inspector.command("\"store\":\"board\",\"command\":\"present\"")
    #expect((board?["error"] as? String)?.contains("read-only") == true)
    #expect(todo.finish() == 0)
    let steered = inspector.lines.values.compactMap { $0["steered"] as? String }.sorted()
    #expect(steered == ["dispatch", "jump", "present", "skip", "unskip"])
  }

  @Test("kill -9 of the inspector mid-session leaves todo working, and it reconnects when the inspector is back")
  func inspectorKilled() throws {
    let first = try LiveInspector()
    let port = first.port
    let folder = try Faults.temporaryFolder("live-killed")
    defer { try? FileManager.default.removeItem(at: folder) }
    let todo = try LiveTodo(in: folder, environment: ["FLUX_INSPECTOR": "127.0.0.1:\(port)"])
    todo.send("add Milk\n")
    #expect(first.waitUntil { first.lines.count == 1 })
    first.kill()
    todo.send("add Tea\nshow\n")
    #expect(todo.waitForOutput("  1. [ ] Milk\n  2. [ ] Tea\n"))
    let second = try LiveInspector(port: port)
    #expect(second.waitUntil { second.lines.count == 2 })
    #expect(
      second.messages(ofType: "hello").first?["session"] as? String == first.messages.first?["session"] as? String)
    let jump = second.command("\"store\":\"list:Inbox\",\"command\":\"jump\",\"to\":0")
    #expect(jump?["ok"] as? Bool == true)
    #expect(todo.waitForOutput("Inspector: jumped list:Inbox to after #0"))
    #expect(todo.finish() == 0)
    #expect(todo.errors.contains("Flux: the connection to the inspector at 127.0.0.1:\(port) ended"), "\(todo.errors)")
  }

  @Test(
    "a list dropped and made again under its name is steered on its own actions: a skip of its one action leaves it empty"
  )
  func listMadeAgainIsSteeredOnItsOwnActions() throws {
    let inspector = try LiveInspector()
    let folder = try Faults.temporaryFolder("live-again")
    defer { try? FileManager.default.removeItem(at: folder) }
    let todo = try LiveTodo(in: folder, environment: ["FLUX_INSPECTOR": "127.0.0.1:\(inspector.port)"])
    todo.send("new Groceries\n")
    #expect(inspector.waitUntil { !inspector.lines.isEmpty })
    // The log's queue is idle a while: the lines of the commands that follow may wait there.
    usleep(100_000)
    todo.send("add Milk\nuse Inbox\ndrop Groceries\nnew Groceries\nadd Tea\n")
    func tea() -> Int? {
      inspector.lines.first { _, line in
        line["store"] as? String == "list:Groceries" && "\(line["action"] ?? "")".contains("Tea")
      }?.key
    }
    #expect(inspector.waitUntil { tea() != nil })
    let at = try #require(tea())
    let skip = inspector.command("\"store\":\"list:Groceries\",\"command\":\"skip\",\"at\":\(at)")
    #expect(skip?["ok"] as? Bool == true, "\(skip ?? [:])")
    #expect(todo.waitForOutput("Inspector: skipped #\(at) of list:Groceries\n"))
    todo.send("show\n")
    #expect(todo.finish() == 0)
    let shown = try #require(todo.printedToTheEnd.components(separatedBy: "Groceries> show\n").last)
    #expect(!shown.contains("Tea"), "the skip left its action:\n\(shown)")
    #expect(!shown.contains("Milk"), "the list made again took the dropped one's Milk:\n\(shown)")
  }

  @Test(
    "rule 17: with --record, what todo prints of a command of the inspector is in the log first: a kill -9 right after it leaves its line there"
  )
  func inv17_inspectorCommandIsRecordedBeforeItIsPrinted() throws {
    let inspector = try LiveInspector()
    let folder = try Faults.temporaryFolder("live-record")
    defer { try? FileManager.default.removeItem(at: folder) }
    let todo = try LiveTodo(
      in: folder, arguments: ["--record", "s.jsonl"], environment: ["FLUX_INSPECTOR": "127.0.0.1:\(inspector.port)"])
    todo.send("add Milk\nadd Eggs\n")
    #expect(inspector.waitUntil { inspector.lines.count == 2 })
    for round in 0..<3 {
      // The logs' queues are idle a while: the line of the command's commit may wait there.
      usleep(100_000)
      let jump = inspector.command("\"store\":\"list:Inbox\",\"command\":\"jump\",\"to\":\(round % 2)")
      #expect(jump?["ok"] as? Bool == true, "\(jump ?? [:])")
      #expect(todo.waitForOutput("Inspector: jumped list:Inbox to after #\(round % 2)\n"))
    }
    todo.killWithSIGKILL()
    let text = try String(contentsOf: folder.appendingPathComponent("s.jsonl"), encoding: .utf8)
    let lines = text.split(separator: "\n")
    #expect(lines.count == 5, "\(text)")
    #expect(lines.filter { $0.contains("\"restore\"") }.count == 3, "\(text)")
  }

  @Test("without FLUX_INSPECTOR nothing is attempted; a malformed one is said once and ignored")
  func notConfigured() throws {
    let inspector = try LiveInspector()
    let folder = try Faults.temporaryFolder("live-none")
    defer { try? FileManager.default.removeItem(at: folder) }
    let plain = try Faults.run([], input: "add Milk\nshow\n", in: folder)
    let malformed = try Faults.run(
      [], input: "add Milk\nshow\n", in: folder, environment: ["FLUX_INSPECTOR": "127.0.0.1"])
    #expect(plain.status == 0)
    #expect(malformed.status == 0)
    #expect(malformed.output == plain.output)
    #expect(plain.errors.isEmpty)
    #expect(malformed.errors == "Flux: FLUX_INSPECTOR: \"127.0.0.1\" is not an address: expected HOST:PORT\n")
    #expect(inspector.messages.isEmpty)
    inspector.kill()
  }
}

/// The `todo` program running with standard input and output of the test's.
private final class LiveTodo: @unchecked Sendable {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private let errorPipe = Pipe()
  // Read only by the test's thread.
  private var seen = ""
  private let collected = Collected()

  init(in folder: URL, arguments: [String] = [], environment: [String: String]) throws {
    process.executableURL = Faults.todo
    process.arguments = arguments
    process.currentDirectoryURL = folder
    process.environment = ProcessInfo.processInfo.environment.merging(
      ["ASAN_OPTIONS": "detect_leaks=0", "SWIFT_BACKTRACE": "enable=no"]
    ) { $1 }.merging(environment) { $1 }
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errorPipe
    try process.run()
    let process = self.process
    DispatchQueue.global().asyncAfter(deadline: .now() + 120) {
      if process.isRunning { process.terminate() }
    }
    let collected = self.collected
    let errors = errorPipe.fileHandleForReading
    Thread { collected.set(errors.readDataToEndOfFile()) }.start()
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

  /// Ends its input, and waits for it to exit; returns its status.
  func finish() -> Int32 {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Kills it with -9, and waits for it to end.
  func killWithSIGKILL() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// All it printed, once it ended.
  var printedToTheEnd: String {
    seen + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  }

  /// What it wrote to standard error, once it ended.
  var errors: String {
    String(decoding: collected.wait(), as: UTF8.self)
  }
}

private final class Collected: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  // Written once, before `done` is signalled; read after it is waited for.
  private var data = Data()

  func set(_ data: Data) {
    self.data = data
    done.signal()
  }

  func wait() -> Data {
    done.wait()
    done.signal()
    return data
  }
}
