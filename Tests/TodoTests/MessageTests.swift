import Foundation
import Testing

/// What the `todo` program tells its user, run as a child process.
@Suite("What the program says", .serialized)
struct MessageTests {
  /// A folder with `todo-lists/todo.md` of `bytes`, or without one.
  static func folder(todo bytes: [UInt8]? = nil) throws -> URL {
    let folder = try Faults.temporaryFolder("messages")
    if let bytes {
      let lists = folder.appendingPathComponent("todo-lists")
      try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
      try Data(bytes).write(to: lists.appendingPathComponent("todo.md"))
    }
    return folder
  }

  @Test(
    "rule 17: every message about a file names the path and the cause in words, never a Foundation error code",
    arguments: [
      (["--replay", "/proc/nope"], "", "todo: cannot read /proc/nope: does not exist"),
      (["--replay", "/tmp"], "", "todo: cannot read /tmp: is a folder"),
      (["--record", "nowhere/s.jsonl"], "", "does not exist"),
      (["--record", "plain/s.jsonl"], "", "/plain is not a folder"),
      ([], "save plain/lists\n", "/plain: is not a folder"),
      ([], "load /proc/nope\n", "Error: there is no /proc/nope/todo.md; save writes it"),
      ([], "load inway\n", "/inway/todo.md: is a folder"),
    ])
  func inv17_causeInWords(arguments: [String], input: String, expected: String) throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data("a file".utf8).write(to: folder.appendingPathComponent("plain"))
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("inway/todo.md"), withIntermediateDirectories: true)
    let run = try Faults.run(arguments, input: input, in: folder)
    #expect(run.text.contains(expected), "\(run.text)")
    for raw in ["NSCocoaErrorDomain", "The operation could not be completed", "The file", "doesn’t exist"] {
      #expect(!run.text.contains(raw))
    }
  }

  @Test("a todo.md that is not UTF-8 says at which byte, and save does not replace it")
  func notUTF8AtByte() throws {
    let folder = try Self.folder(todo: Array("# Todo\n\n## A".utf8) + [0xFF] + Array("\n".utf8))
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run([], input: "save\n", in: folder)
    #expect(run.errors.contains("the file is not UTF-8 at byte 13"))
    #expect(run.errors.contains("save does not replace"))
  }

  @Test("a replayed action of no case of its type names the case and the type")
  func noCaseInBoardAction() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let line =
      #"{"action":{"explode":{"name":"Work"}},"outcome":"committed","store":"board","time":"2026-11-23T03:07:49.123Z"}"#
    try Data((line + "\n").utf8).write(to: folder.appendingPathComponent("bad.jsonl"))
    let run = try Faults.run(["--replay", "bad.jsonl"], in: folder)
    #expect(
      run.errors.contains(
        "todo: cannot replay bad.jsonl: line 1: the action is not a BoardAction (no case `explode` in BoardAction)"))
  }

  @Test("an option given twice is an error, not the last one kept")
  func repeatedOption() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run(["--record", "a.jsonl", "--record", "b.jsonl"], in: folder)
    #expect(run.status == 64)
    #expect(run.errors.contains("todo: --record is given twice"))
    #expect(Faults.files(in: folder, startingWith: "") == [])
  }

  @Test("piped input prints the line each item command changed, not the whole list each time")
  func pipedInputPrintsTheChangedLine() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let count = 5_000
    let input = (1...count).map { "add Item \($0)\n" }.joined() + "done 3\nremove 1\n"
    let run = try Faults.run([], input: input, in: folder)
    let lines = run.output.split(separator: "\n")
    // The echo of each command, and one line for each.
    #expect(lines.count == 2 * (count + 2))
    #expect(
      lines.suffix(6) == [
        "Inbox> add Item \(count)", "  \(count). [ ] Item \(count)", "Inbox> done 3", "  3. [x] Item 3",
        "Inbox> remove 1", "Inbox — 1 of \(count - 1) done",
      ])
  }

  @Test("control characters of a title or a command are shown as escapes, never sent to the terminal")
  func controlCharactersAreNotEchoed() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run([], input: "add Red \u{1B}[31mtext\nfrob\u{7}nicate\nadd Plain\n", in: folder)
    #expect(!run.text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" })
    #expect(run.output.contains("Inbox> add Red \\u{1B}[31mtext"))
    #expect(run.errors.contains("Error: a name or title cannot hold a control character"))
    #expect(run.output.contains("  1. [ ] Plain"))
  }

  @Test("a piped session whose save failed says so on standard error and exits with status 1")
  func failedSaveIsAnErrorAndTheExitStatus() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data("a file".utf8).write(to: folder.appendingPathComponent("plain"))
    let run = try Faults.run([], input: "add Milk\nsave plain/lists\n", in: folder)
    #expect(run.status == 1)
    #expect(run.errors.contains("Error: could not save to \(folder.path)/plain: is not a folder"), "\(run.text)")
    #expect(!run.output.contains("Error"))
    let saved = try Faults.run([], input: "add Milk\nsave\n", in: folder)
    #expect(saved.status == 0)
    #expect(saved.errors.isEmpty)
  }

  @Test("a piped session with a command that failed exits with status 1, the error on standard error")
  func failedCommandIsTheExitStatus() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run([], input: "add Milk\ndone 9\nshw\nadd Eggs\n", in: folder)
    #expect(run.status == 1)
    #expect(run.errors.contains("Error: Inbox has no item 9; it has 1 item"))
    #expect(run.errors.contains("(did you mean \"show\"?)"))
    #expect(!run.output.contains("Error"))
    #expect(run.output.contains("  2. [ ] Eggs"))
  }
}
