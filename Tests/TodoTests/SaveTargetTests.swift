import Foundation
import Testing

@testable import todo

#if canImport(Glibc)
  import Glibc
#endif

/// Which file `save` writes and which it keeps, run as a child process: a file named by any
/// spelling of its path, a file the session never read, a file saved since a recording, a link
/// to the file.
@Suite("What save replaces", .serialized)
struct SaveTargetTests {
  static let oldFile = FileFaultTests.oldFile

  /// Whether the file at `path` is a symbolic link.
  static func isLink(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
  }

  @Test(
    "rule 17: a todo.md its user cannot read is not replaced under any spelling of its folder: //, absolute, linked"
  )
  func inv17_unreadableFileIsKeptUnderEverySpelling() throws {
    guard Faults.isLinux else { return }
    guard Faults.isRoot else {
      print("skipped: running the program as another user needs root")
      return
    }
    let folder = try Faults.temporaryFolder("spellings")
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileFaultTests.writeOldFile(in: folder)
    let file = FileFaultTests.todoFile(in: folder)
    try FileManager.default.createSymbolicLink(
      atPath: folder.appendingPathComponent("linked").path, withDestinationPath: "todo-lists")
    for path in [folder.path, folder.appendingPathComponent("todo-lists").path] { chmod(path, 0o777) }
    chmod(file.path, 0o000)
    let spellings = [
      "todo-lists//", "\(folder.path)//todo-lists", "/\(folder.path)/todo-lists/", "./todo-lists/.", "linked",
      "linked/", "todo-lists/../linked",
    ]
    let input = "add New\n" + spellings.map { "save \($0)\n" }.joined()
    let run = try Faults.run([], input: input, in: folder, through: Faults.nobody)
    #expect(!run.text.contains("Saved"))
    #expect(Faults.contents(file) == Data(Self.oldFile.utf8))
    let refused = run.errors.components(separatedBy: ": it could not be read (permission denied); type save --replace")
    #expect(refused.count - 1 == spellings.count, "\(run.text)")
    #expect(Faults.files(in: folder.appendingPathComponent("todo-lists"), startingWith: "todo.md.") == [])
  }

  @Test("rule 17: save does not replace a todo.md this session never read, such as a folder's notes, unless asked")
  func inv17_saveKeepsAFileItNeverRead() throws {
    let folder = try Faults.temporaryFolder("notes")
    defer { try? FileManager.default.removeItem(at: folder) }
    let notes = folder.appendingPathComponent("project")
    try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
    let file = notes.appendingPathComponent("todo.md")
    let mine = Data("# Todo\n\nThe plan for the project, which is not a list.\n".utf8)
    try mine.write(to: file)
    let run = try Faults.run([], input: "add New\nsave project\n", in: folder)
    #expect(run.errors.contains("Error: save does not replace \(file.path): this session has not loaded it"))
    #expect(run.status == 1)
    #expect(Faults.contents(file) == mine)
    let replaced = try Faults.run([], input: "add New\nsave --replace project\n", in: folder)
    #expect(replaced.status == 0)
    #expect(try TodoFile.parse(bytes: [UInt8](Faults.contents(file) ?? Data())).first?.items.map(\.title) == ["New"])
  }

  @Test("rule 17: after --replay, which loads nothing, save does not replace the lists saved since the recording")
  func inv17_saveAfterAReplayKeepsTheListsSavedSince() throws {
    let folder = try Faults.temporaryFolder("replay-save")
    defer { try? FileManager.default.removeItem(at: folder) }
    _ = try Faults.run(["--record", "s.jsonl"], input: "add Milk\n", in: folder)
    let since = try Faults.run([], input: "add Saved since\nsave\n", in: folder)
    #expect(since.status == 0)
    let file = FileFaultTests.todoFile(in: folder)
    let saved = try #require(Faults.contents(file))
    let run = try Faults.run(["--replay", "s.jsonl"], input: "save\n", in: folder)
    #expect(run.output.contains("Replayed 1 action from s.jsonl."))
    #expect(run.errors.contains("save does not replace \(file.path): this session has not loaded it"))
    #expect(run.status == 1)
    #expect(Faults.contents(file) == saved)
  }

  @Test(
    "rule 17: save through a link to todo.md writes the file the link leads to, and the link stays",
    arguments: ["relative", "absolute", "chain", "dangling"])
  func inv17_saveThroughALinkKeepsTheLink(kind: String) throws {
    let folder = try Faults.temporaryFolder("link")
    defer { try? FileManager.default.removeItem(at: folder) }
    let lists = folder.appendingPathComponent("todo-lists")
    let real = folder.appendingPathComponent("real")
    for made in [lists, real] { try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true) }
    let target = real.appendingPathComponent("todo.md")
    if kind != "dangling" { try Data(Self.oldFile.utf8).write(to: target) }
    let link = lists.appendingPathComponent("todo.md").path
    let destination: String
    switch kind {
    case "absolute":
      destination = target.path
    case "chain":
      destination = "../real/link.md"
      try FileManager.default.createSymbolicLink(
        atPath: real.appendingPathComponent("link.md").path, withDestinationPath: "todo.md")
    default:
      destination = "../real/todo.md"
    }
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: destination)
    let run = try Faults.run([], input: "add New\nsave\n", in: folder)
    #expect(run.status == 0, "\(run.text)")
    try #require(Self.isLink(link))
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == destination)
    let saved = try TodoFile.parse(bytes: [UInt8](Faults.contents(target) ?? Data()))
    #expect(saved.first?.items.map(\.title) == (kind == "dangling" ? ["New"] : ["Kept", "New"]))
    for place in [lists, real] { #expect(Faults.files(in: place, startingWith: "todo.md.") == []) }
  }

  @Test("the folder of the lists, todo-lists, is not added to the clone: git ignores it")
  func theListsFolderIsIgnoredByGit() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    guard FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path) else {
      print("skipped: the package is not a git checkout")
      return
    }
    let git = Process()
    git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    git.arguments = ["git", "-C", root.path, "check-ignore", "--quiet", "--no-index", "todo-lists/todo.md"]
    try git.run()
    git.waitUntilExit()
    guard git.terminationStatus != 127 else {
      print("skipped: git is not installed")
      return
    }
    #expect(git.terminationStatus == 0)
  }
}
