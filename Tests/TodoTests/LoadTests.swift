import Foundation
import Testing

@testable import todo

/// What `load` reads and what it keeps, run as a child process.
@Suite("What load reads", .serialized)
struct LoadTests {
  /// A folder with `todo-lists/todo.md` holding `text`.
  static func folder(todo text: String) throws -> URL {
    let folder = try Faults.temporaryFolder("load")
    let lists = folder.appendingPathComponent("todo-lists")
    try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
    try Data(text.utf8).write(to: lists.appendingPathComponent("todo.md"))
    return folder
  }

  static let controlCharacters = """
    # Todo

    ## In\tbox

    - [ ] Milk
    - [x] Eggs

    ## Work\u{1B}[1m

    - [ ] Ship it\u{7}

    <!-- end of todo: 2 lists -->

    """

  @Test(
    "a list name with a tab or an escape in todo.md loads with its items, says so, and save keeps every item",
    arguments: ["\n", "\r\n"])
  func aNameWithATabOrAnEscapeLoadsWithItsItems(lineEnd: String) throws {
    let folder = try Self.folder(todo: Self.controlCharacters.replacingOccurrences(of: "\n", with: lineEnd))
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run([], input: "lists\nsave\n", in: folder)
    #expect(run.status == 0, "\(run.text)")
    #expect(run.output.contains("Loaded 2 lists from todo-lists/todo.md."))
    #expect(
      run.output.contains(#"line 3: the list's name "In\u{9}box" holds a control character; it is read as "In box""#))
    #expect(run.output.contains(#"line 8: the list's name "Work\u{1B}[1m" holds a control character"#))
    #expect(
      run.output.contains(#"line 10: the title "Ship it\u{7}" holds a control character; it is read as "Ship it""#))
    #expect(run.output.contains("* In box    1 of 2 done"))
    #expect(run.output.contains("  Work [1m  0 of 1 done"))
    let saved = try TodoFile.parse(bytes: [UInt8](Faults.contents(FileFaultTests.todoFile(in: folder)) ?? Data()))
    #expect(saved.map(\.name) == ["In box", "Work [1m"])
    #expect(saved.map { $0.items.map(\.title) } == [["Milk", "Eggs"], ["Ship it"]])
  }

  @Test(
    "a todo.md whose names become one list's, or hold only control characters, is refused with its line; save keeps it",
    arguments: [
      ("## A B\n\n- [ ] one\n\n## A\tB\n\n- [ ] two\n", "line 7: there are two lists named \"A B\""),
      ("## \u{1B}\n\n- [ ] one\n", "line 3: the list's name holds only control characters"),
      ("## A\n\n- [ ] \u{1B}\u{7}\n", "line 5: the item's title holds only control characters"),
    ])
  func namesThatWouldLoseAListAreRefused(body: String, message: String) throws {
    let lists = body.components(separatedBy: "\n## ").count
    let text = "# Todo\n\n" + body + "\n" + TodoFile.trailer(lists: lists) + "\n"
    let folder = try Self.folder(todo: text)
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run([], input: "add New\nsave\n", in: folder)
    #expect(run.errors.contains(message), "\(run.text)")
    #expect(run.errors.contains("save does not replace"))
    #expect(Faults.contents(FileFaultTests.todoFile(in: folder)) == Data(text.utf8))
  }

  @Test("load with changes that are not saved is refused, and load --discard drops them")
  func loadWithUnsavedChangesIsRefusedUnlessDiscarding() throws {
    let folder = try Self.folder(todo: FileFaultTests.oldFile)
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try Faults.run([], input: "add New\nload\nshow\nload --discard\nshow\n", in: folder)
    #expect(
      run.errors.contains(
        "Error: load would drop the changes to the lists that are not saved; "
          + "save them first, or type load --discard to drop them"))
    #expect(run.status == 1)
    let shown = run.output.components(separatedBy: "Old> show\n").dropFirst().map { $0.prefix { $0 != ">" } }
    #expect(shown.count == 2)
    #expect(shown.first?.contains("2. [ ] New") == true)
    #expect(shown.last?.contains("New") == false)
    #expect(run.output.contains("Loaded 1 list from \(FileFaultTests.todoFile(in: folder).path)."))
    // Saved changes are not dropped: load runs at once.
    let saved = try Faults.run([], input: "add New\nsave\nload\nload\n", in: folder)
    #expect(saved.status == 0, "\(saved.text)")
    #expect(saved.errors.isEmpty)
  }
}
