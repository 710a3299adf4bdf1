import FluxDevtools
import Foundation
import Testing

@testable import todo

#if canImport(Glibc)
  import Glibc
#endif

/// Real faults under the `todo` program, run as a child process: a full disk, a file-size limit,
/// a read-only folder, a file its user cannot read, a folder where a file should be, CRLF and a
/// byte order mark, one file for `--record` and `--replay`, and a kill between write and rename.
/// Each time the old content or the new is there, never neither, and the failure is said.
@Suite("Faults in files", .serialized)
struct FileFaultTests {
  static let oldFile = "# Todo\n\n## Old\n\n- [ ] Kept\n\n<!-- end of todo: 1 list -->\n"
  static let oldLog =
    #"{"action":{"create":{"name":"Old"}},"outcome":"committed","store":"board","time":"2026-11-23T03:07:49.123Z"}"#
    + "\n"

  /// `count` lines that add an item each.
  static func adds(_ count: Int) -> String {
    (1...count).map { "add item number \($0) of a long list\n" }.joined()
  }

  /// The file-size limit of the size-limit tests, and lines that add more than that to a file:
  /// 1 MB, as a sanitizer's runtime stops a program with a lower limit before it starts.
  static let sizeLimit = ["/usr/bin/prlimit", "--fsize=1048576", "--"]
  static let moreThanTheSizeLimit = (1...1_100).map { "add \($0) " + String(repeating: "x", count: 1_000) + "\n" }
    .joined()

  /// Writes the old `todo.md` into `folder/todo-lists`.
  static func writeOldFile(in folder: URL) throws {
    let lists = folder.appendingPathComponent("todo-lists")
    try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
    try Data(oldFile.utf8).write(to: lists.appendingPathComponent("todo.md"))
  }

  static func todoFile(in folder: URL) -> URL {
    folder.appendingPathComponent("todo-lists/todo.md")
  }

  @Test("rule 17: a save that fills the disk keeps the old file, says the disk is full, and leaves nothing aside")
  func inv17_fullDiskSaveKeepsTheOldFile() throws {
    try Faults.withSmallDisk(bytes: 32_768, prepare: Self.writeOldFile) { disk in
      let run = try Faults.run([], input: Self.adds(1_000) + "save\n", in: disk)
      #expect(run.text.contains("could not save to \(Self.todoFile(in: disk).path): the disk is full"))
      #expect(!run.text.contains("Saved"))
      #expect(Faults.contents(Self.todoFile(in: disk)) == Data(Self.oldFile.utf8))
      #expect(Faults.files(in: disk.appendingPathComponent("todo-lists"), startingWith: "todo.md.") == [])
    }
  }

  @Test("rule 17: a save past the file-size limit keeps the old file and says why")
  func inv17_fileSizeLimitSaveKeepsTheOldFile() throws {
    guard Faults.isLinux else { return }
    let folder = try Faults.temporaryFolder("size-limit")
    defer { try? FileManager.default.removeItem(at: folder) }
    try Self.writeOldFile(in: folder)
    let run = try Faults.run([], input: Self.moreThanTheSizeLimit + "save\n", in: folder, through: Self.sizeLimit)
    #expect(!run.wasSignalled)
    #expect(run.text.contains("the file would pass the largest size this process may write"))
    #expect(Faults.contents(Self.todoFile(in: folder)) == Data(Self.oldFile.utf8))
  }

  @Test(
    "rule 17: a recording that fills the disk is reported at once and at the end; every whole line is at the path, the old log beside it"
  )
  func inv17_fullDiskRecordingIsReported() throws {
    let writeOldLog: (URL) throws -> Void = {
      try Data(Self.oldLog.utf8).write(to: $0.appendingPathComponent("s.jsonl"))
    }
    try Faults.withSmallDisk(bytes: 32_768, prepare: writeOldLog) { disk in
      let run = try Faults.run(["--record", "s.jsonl"], input: Self.adds(1_000), in: disk)
      #expect(run.errors.contains("todo: the recording stopped: cannot write \(disk.path)/s.jsonl: the disk is full"))
      #expect(
        run.errors.contains("todo: the recording is incomplete: cannot write \(disk.path)/s.jsonl: the disk is full"))
      #expect(run.status == 74)
      #expect(Faults.contents(disk.appendingPathComponent("s.jsonl.1")) == Data(Self.oldLog.utf8))
      // The lines written before the disk was full are at the path, each whole.
      let recording = try Recording(contentsOf: disk.appendingPathComponent("s.jsonl"))
      #expect(recording.entries.count > 10)
      #expect(Faults.files(in: disk, startingWith: "s.jsonl") == ["s.jsonl", "s.jsonl.1"])
    }
  }

  @Test(
    "rule 17: a recording past the file-size limit is reported; every whole line is at the path, the old log beside it")
  func inv17_fileSizeLimitRecordingIsReported() throws {
    guard Faults.isLinux else { return }
    let folder = try Faults.temporaryFolder("size-limit-log")
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(Self.oldLog.utf8).write(to: folder.appendingPathComponent("s.jsonl"))
    let run = try Faults.run(
      ["--record", "s.jsonl"], input: Self.moreThanTheSizeLimit, in: folder, through: Self.sizeLimit)
    #expect(!run.wasSignalled)
    #expect(run.errors.contains("the file would pass the largest size this process may write"))
    #expect(run.status == 74)
    #expect(Faults.contents(folder.appendingPathComponent("s.jsonl.1")) == Data(Self.oldLog.utf8))
    let recording = try Recording(contentsOf: folder.appendingPathComponent("s.jsonl"))
    #expect(recording.entries.count > 10)
  }

  @Test("rule 17: a save into a read-only folder says so and changes nothing")
  func inv17_readOnlyFolder() throws {
    try Faults.withSmallDisk(bytes: 65_536, readOnly: true, prepare: Self.writeOldFile) { disk in
      let run = try Faults.run([], input: "add New\nsave\n", in: disk)
      #expect(run.text.contains("could not save to \(Self.todoFile(in: disk).path): the file system is read-only"))
      #expect(Faults.contents(Self.todoFile(in: disk)) == Data(Self.oldFile.utf8))
    }
  }

  /// Root reads any file whatever its permission bits: the program runs as another user
  /// (`setpriv`, nobody), for whom a file of mode 000 cannot be read.
  @Test("rule 17: a todo.md its user cannot read is not replaced by save unless asked with save --replace")
  func inv17_unreadableFileIsNotReplacedUnasked() throws {
    guard Faults.isLinux else { return }
    guard Faults.isRoot else {
      print("skipped: running the program as another user needs root")
      return
    }
    let folder = try Faults.temporaryFolder("unreadable")
    defer { try? FileManager.default.removeItem(at: folder) }
    try Self.writeOldFile(in: folder)
    let file = Self.todoFile(in: folder)
    for path in [folder.path, folder.appendingPathComponent("todo-lists").path] { chmod(path, 0o777) }
    chmod(file.path, 0o000)
    let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    let run = try Faults.run([], input: "add New\nsave\n", in: folder, through: nobody)
    #expect(run.errors.contains("cannot read \(file.path): permission denied"))
    #expect(run.errors.contains("save does not replace \(file.path): it could not be read (permission denied)"))
    #expect(Faults.contents(file) == Data(Self.oldFile.utf8))
    let replaced = try Faults.run([], input: "add New\nsave --replace\n", in: folder, through: nobody)
    #expect(replaced.output.contains("Saved 1 list to \(file.path)"))
    #expect(String(decoding: Faults.contents(file) ?? Data(), as: UTF8.self).contains("- [ ] New"))
  }

  @Test("rule 17: a file in /proc that denies reading, even to root, is named with the cause in words")
  func inv17_unreadableFileMessage() throws {
    guard Faults.isLinux else { return }
    let folder = try Faults.temporaryFolder("proc")
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run(["--replay", "/proc/sys/vm/compact_memory"], in: folder)
    #expect(run.errors.contains("todo: cannot read /proc/sys/vm/compact_memory: permission denied"))
  }

  @Test("rule 17: a folder named todo.md is never deleted, by save nor by save --replace")
  func inv17_folderWhereTheFileShouldBeIsKept() throws {
    let folder = try Faults.temporaryFolder("folder-in-the-way")
    defer { try? FileManager.default.removeItem(at: folder) }
    let inTheWay = Self.todoFile(in: folder)
    try FileManager.default.createDirectory(at: inTheWay, withIntermediateDirectories: true)
    try Data("mine".utf8).write(to: inTheWay.appendingPathComponent("notes.txt"))
    let run = try Faults.run([], input: "add New\nsave\nsave --replace\n", in: folder)
    #expect(run.errors.contains("todo: cannot read \(inTheWay.path): is a folder"))
    #expect(run.errors.contains("could not save to \(inTheWay.path): is a folder"))
    #expect(Faults.contents(inTheWay.appendingPathComponent("notes.txt")) == Data("mine".utf8))
    let record = try Faults.run(["--record", "todo-lists"], in: folder)
    #expect(record.errors.contains("todo: cannot record to todo-lists: is a folder"))
    #expect(FileManager.default.fileExists(atPath: inTheWay.appendingPathComponent("notes.txt").path))
  }

  @Test(
    "a todo.md with CRLF line ends or a byte order mark loads as written",
    arguments: [
      oldFile.replacingOccurrences(of: "\n", with: "\r\n"),
      "\u{FEFF}" + oldFile,
      oldFile.replacingOccurrences(of: "## Old\n", with: "## Old\r\n"),
    ])
  func crlfAndByteOrderMark(file: String) throws {
    let folder = try Faults.temporaryFolder("crlf")
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("todo-lists"), withIntermediateDirectories: true)
    try Data(file.utf8).write(to: Self.todoFile(in: folder))
    let run = try Faults.run([], input: "lists\nshow\n", in: folder)
    #expect(run.output.contains("Loaded 1 list from todo-lists/todo.md."))
    #expect(run.output.contains("* Old  0 of 1 done"))
    #expect(run.output.contains("  1. [ ] Kept"))
    #expect(run.errors.isEmpty)
  }

  @Test("--record and --replay of one file: a replay that fails leaves the file as it was")
  func sameFileForRecordAndReplayKeepsItWhenTheReplayFails() throws {
    let folder = try Faults.temporaryFolder("same-file")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("s.jsonl")
    _ = try Faults.run(["--record", "s.jsonl"], input: "add Milk\nnew Work\n", in: folder)
    var content = try #require(Faults.contents(log))
    content.append(contentsOf: Self.oldLog.replacingOccurrences(of: "board", with: "elsewhere").utf8)
    try content.write(to: log)
    let run = try Faults.run(["--record", "s.jsonl", "--replay", "s.jsonl"], in: folder)
    #expect(run.status == 65)
    #expect(run.errors.contains("line 3: no store to replay \"elsewhere\" into"))
    #expect(Faults.contents(log) == content)
    #expect(Faults.files(in: folder, startingWith: "s.jsonl.") == [])
  }

  @Test(
    "rule 17: --record and --replay of one file lose nothing: the file holds the replayed session and the new actions, the old one is beside it"
  )
  func inv17_sameFileForRecordAndReplayLosesNothing() throws {
    let folder = try Faults.temporaryFolder("same-file-ok")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("s.jsonl")
    _ = try Faults.run(["--record", "s.jsonl"], input: "add Milk\nnew Work\n", in: folder)
    let old = try #require(Faults.contents(log))
    let run = try Faults.run(["--record", "s.jsonl", "--replay", "s.jsonl"], input: "add Ship it\n", in: folder)
    #expect(run.output.contains("Recording to s.jsonl; the file that was there is kept as s.jsonl.1."))
    #expect(run.output.contains("Replayed 2 actions from s.jsonl."))
    let recording = try Recording(contentsOf: log)
    #expect(recording.entries.map(\.store) == ["list:Inbox", "board", "list:Work"])
    #expect(Faults.contents(folder.appendingPathComponent("s.jsonl.1")) == old)
  }

  @Test("rule 17: a process killed between writing and renaming leaves the old todo.md whole")
  func inv17_killedBeforeRenameKeepsTheOldFile() throws {
    let folder = try Faults.temporaryFolder("killed")
    defer { try? FileManager.default.removeItem(at: folder) }
    try Self.writeOldFile(in: folder)
    let run = try Faults.run([], input: "add New\nsave\n", in: folder, environment: ["TODO_KILL_BEFORE_RENAME": "1"])
    #expect(run.wasSignalled && run.status == SIGKILL)
    #expect(Faults.contents(Self.todoFile(in: folder)) == Data(Self.oldFile.utf8))
    // The new file, whole, waits beside it.
    let lists = folder.appendingPathComponent("todo-lists")
    let aside = try #require(Faults.files(in: lists, startingWith: "todo.md.partial-").first)
    let new = try TodoFile.parse(String(decoding: Faults.contents(lists.appendingPathComponent(aside))!, as: UTF8.self))
    #expect(new.first?.items.map(\.title) == ["Kept", "New"])
  }

  @Test("rule 17: a recording killed mid-session leaves every line at the path and the old log whole beside it")
  func inv17_killedWhileRecordingKeepsTheOldLog() throws {
    let folder = try Faults.temporaryFolder("killed-log")
    defer { try? FileManager.default.removeItem(at: folder) }
    let log = folder.appendingPathComponent("s.jsonl")
    try Data(Self.oldLog.utf8).write(to: log)
    let process = Process()
    process.executableURL = Faults.todo
    process.arguments = ["--record", "s.jsonl"]
    process.currentDirectoryURL = folder
    process.environment = ProcessInfo.processInfo.environment.merging(
      ["ASAN_OPTIONS": "detect_leaks=0", "SWIFT_BACKTRACE": "enable=no"]) { $1 }
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    input.fileHandleForWriting.write(Data("add Milk\nadd Eggs\n".utf8))
    // Both items are added, so both lines are written: wait for the second row.
    var seen = ""
    while !seen.contains("2. [ ] Eggs") {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      seen += String(decoding: chunk, as: UTF8.self)
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)
    #expect(Faults.contents(folder.appendingPathComponent("s.jsonl.1")) == Data(Self.oldLog.utf8))
    let recording = try Recording(contentsOf: log)
    #expect(recording.entries.count == 2)
  }
}
