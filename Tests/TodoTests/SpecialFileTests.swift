import Foundation
import Testing

@testable import todo

#if canImport(Glibc)
  import Glibc
#endif

/// A `todo.md` that is no plain file (a pipe, a link to a device), and two sessions that save
/// one folder at once, run as child processes.
@Suite("Pipes, devices and two sessions", .serialized)
struct SpecialFileTests {
  /// Stops a child that would wait for ever, or fill the memory, rather than the test run: a
  /// run this ends has the status 124 (`timeout`) or a signal. Under a sanitizer, only the time
  /// is bounded: its runtime reserves terabytes of address space as the program starts, and
  /// stops the program at once under any limit of it.
  static let bounded =
    ["/usr/bin/timeout", "-s", "KILL", "20"] + (isSanitized ? [] : ["/usr/bin/prlimit", "--as=8589934592", "--"])

  /// Whether this test process, and so the `todo` built beside it, runs under the thread or the
  /// address sanitizer: its runtime is then linked in.
  static let isSanitized: Bool = {
    let program = dlopen(nil, RTLD_NOW)
    let runtimes: [String] = ["__tsan_init", "__asan_init"]
    return runtimes.contains { name in dlsym(program, name) != nil }
  }()

  @Test(
    "rule 17: a todo.md that is a pipe or a link to a device is refused at start and by load, and save keeps it",
    arguments: ["pipe", "/dev/zero", "/dev/null"])
  func inv17_aTodoFileThatIsNoPlainFileIsRefused(kind: String) throws {
    guard Faults.isLinux else { return }
    let folder = try Faults.temporaryFolder("special")
    defer { try? FileManager.default.removeItem(at: folder) }
    let lists = folder.appendingPathComponent("todo-lists")
    try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
    let file = FileFaultTests.todoFile(in: folder)
    if kind == "pipe" {
      try #require(mkfifo(file.path, 0o644) == 0)
    } else {
      try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: kind)
    }
    let run = try Faults.run(
      [], input: "add New\nload\nsave\n", in: folder, environment: ["SWIFT_BACKTRACE": "enable=no"],
      through: Self.bounded)
    #expect(!run.wasSignalled && run.status == 1, "\(run.status) \(run.text)")
    let cause = "is not a plain file (a device, a pipe or a socket)"
    #expect(run.errors.contains("todo: cannot read \(file.path): \(cause); starting with an empty Inbox"))
    #expect(run.errors.contains("Error: cannot read \(file.path): \(cause)"))
    #expect(run.errors.contains("Error: could not save to \(kind == "pipe" ? file.path : kind): \(cause)"))
    #expect(!run.text.contains("Saved"))
  }

  @Test(
    "rule 17: two sessions that save one todo.md at once never both replace it: no saved item is lost",
    arguments: [true, false])
  func inv17_twoSessionsSavingAtOnceLoseNothingSaved(fileExists: Bool) throws {
    var raced = 0
    for round in 0..<20 {
      let folder = try Faults.temporaryFolder("two-sessions")
      defer { try? FileManager.default.removeItem(at: folder) }
      if fileExists { try FileFaultTests.writeOldFile(in: folder) }
      let file = FileFaultTests.todoFile(in: folder)
      let runs = Runs()
      DispatchQueue.concurrentPerform(iterations: 2) { session in
        let title = session == 0 ? "First" : "Second"
        runs.set(session, (title, Result { try Faults.run([], input: "add \(title)\nsave\n", in: folder) }))
      }
      let finished = try runs.all.map { ($0.title, try $0.run.get()) }
      // Each session that says it saved finds its item in the file: a session that loaded the
      // other's save saves both items; one that loaded the old file while the other saved is
      // refused, and says so.
      let items = try TodoFile.parse(bytes: [UInt8](Faults.contents(file) ?? Data())).first?.items.map(\.title)
      for (title, run) in finished {
        if run.output.contains("Saved 1 list to \(file.path)") {
          #expect(items?.contains(title) == true, "round \(round): \(finished.map(\.1.text))")
        } else {
          raced += 1
          #expect(run.errors.contains("Error: save does not replace \(file.path): "), "\(run.text)")
          #expect(run.status == 1)
        }
      }
      if fileExists { #expect(items?.first == "Kept") }
      #expect(Faults.files(in: folder.appendingPathComponent("todo-lists"), startingWith: "todo.md.") == [])
    }
    print("two sessions\(fileExists ? "" : ", a new file"): \(raced) of 20 rounds had a save refused")
  }

  /// A `todo.md` of `count` lists of one item each.
  static func manyLists(_ count: Int) -> String {
    let lists = (1...count).map { "## List \($0)\n\n- [ ] Item \($0)\n\n" }.joined()
    return "# Todo\n\n" + lists + TodoFile.trailer(lists: count) + "\n"
  }

  /// Stops a run that takes minutes rather than seconds: a bound, not a measurement (the
  /// load went through the lists once per list, each name against every other and each list's
  /// store found by a scan: minutes for 20,000 lists; a second or two in one pass).
  static let withinAMinute = ["/usr/bin/timeout", "-s", "KILL", "60"]

  @Test("a todo.md of 20,000 lists loads, is used and saves in one pass over its lists, not one per list")
  func aFileOfManyListsLoadsInOnePass() throws {
    guard Faults.isLinux else { return }
    let folder = try Faults.temporaryFolder("many-lists")
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("todo-lists"), withIntermediateDirectories: true)
    let file = FileFaultTests.todoFile(in: folder)
    try Data(Self.manyLists(20_000).utf8).write(to: file)
    let run = try Faults.run(
      [], input: "use List 19999\nadd More\nsave\nload\n", in: folder, through: Self.withinAMinute)
    #expect(!run.wasSignalled && run.status == 0, "\(run.status) \(run.errors)")
    #expect(run.output.contains("Loaded 20000 lists from todo-lists/todo.md."))
    #expect(run.output.contains("Saved 20000 lists to \(file.path)"))
    #expect(run.output.contains("Loaded 20000 lists from \(file.path)."))
    let lists = try TodoFile.parse(bytes: [UInt8](Faults.contents(file) ?? Data()))
    #expect(lists.count == 20_000)
    #expect(lists[19_998].items.map(\.title) == ["Item 19999", "More"])
  }
}

/// What each of two sessions run at once did.
private final class Runs: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var runs: [Int: (title: String, run: Result<TodoRun, any Error>)] = [:]

  func set(_ session: Int, _ run: (title: String, run: Result<TodoRun, any Error>)) {
    lock.withLock { runs[session] = run }
  }

  var all: [(title: String, run: Result<TodoRun, any Error>)] {
    lock.withLock { runs.sorted { $0.key < $1.key }.map(\.value) }
  }
}
