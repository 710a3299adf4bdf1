import Foundation
import Testing

@testable import todo

extension ListStoreSuites {
  /// What the board's `save` replaces and `load` keeps, in this process: each command's file work
  /// is done when it returns.
  @Suite("The board's files")
  @MainActor
  struct BoardFileTests {
    let notATodoFile = Data("# Notes\n\nmine\n".utf8)

    /// A new folder with `todo-lists/` in it, and `linked`, a link to `todo-lists`.
    func makeFolder(_ name: String) throws -> (folder: URL, lists: URL) {
      let folder = try Faults.temporaryFolder(name)
      let lists = folder.appendingPathComponent("todo-lists")
      try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(
        atPath: folder.appendingPathComponent("linked").path, withDestinationPath: "todo-lists")
      return (folder, lists)
    }

    /// Every spelling of the folder `lists` in `folder`.
    func spellings(of lists: URL, in folder: URL) -> [String] {
      [
        lists.path, lists.path + "/", lists.path + "//", folder.path + "//todo-lists", folder.path + "/./todo-lists",
        folder.path + "/todo-lists/../todo-lists", "/" + lists.path, folder.path + "/linked", folder.path + "/linked/",
      ]
    }

    @Test("rule 17: save does not replace a todo.md it could not read, whatever spelling of the folder it is given")
    func inv17_unreadFileIsKeptUnderEverySpelling() async throws {
      let (folder, lists) = try makeFolder("spellings")
      defer { try? FileManager.default.removeItem(at: folder) }
      let file = lists.appendingPathComponent("todo.md")
      try notATodoFile.write(to: file)
      let board = Board(firstList: "Inbox", defaultFolder: lists, executor: mainQueueNow)
      #expect(throws: CommandError.self) { _ = try board.read(folder: lists) }
      _ = try await board.run(.add("Milk"))
      for spelling in spellings(of: lists, in: folder) {
        let error = await #expect(throws: CommandError.self) { try await board.run(.save(spelling)) }
        #expect(
          error?.message.contains(": it could not be read (line 1: a todo file starts with") == true, "\(spelling)")
        #expect(FileManager.default.contents(atPath: file.path) == notATodoFile, "\(spelling)")
      }
    }

    @Test("rule 17: save does not replace a todo.md that changed since this session loaded it, unless asked")
    func inv17_saveKeepsAFileThatChangedSinceItWasLoaded() async throws {
      let (folder, lists) = try makeFolder("changed")
      defer { try? FileManager.default.removeItem(at: folder) }
      let file = lists.appendingPathComponent("todo.md")
      try Data(FileFaultTests.oldFile.utf8).write(to: file)
      let board = Board(firstList: "Inbox", defaultFolder: lists, executor: mainQueueNow)
      _ = try await board.run(.load(nil))
      _ = try await board.run(.add("Mine"))
      // Another session saves its lists after this one loaded.
      let theirs = Data(FileFaultTests.oldFile.replacingOccurrences(of: "Kept", with: "Theirs").utf8)
      try theirs.write(to: file)
      let error = await #expect(throws: CommandError.self) { try await board.run(.save(nil)) }
      #expect(
        error?.message == "save does not replace \(file.path): it changed since this session loaded or saved it; "
          + "type save --replace to replace it, or save to another folder")
      #expect(FileManager.default.contents(atPath: file.path) == theirs)
      _ = try await board.run(.save(nil, replacing: true))
      #expect(try TodoFile.read(folder: lists).lists.first?.items.map(\.title) == ["Kept", "Mine"])
    }

    @Test("save replaces the todo.md this session loaded or saved, whatever spelling of the folder it is given")
    func saveReplacesWhatItLoadedOrSaved() async throws {
      let (folder, lists) = try makeFolder("known")
      defer { try? FileManager.default.removeItem(at: folder) }
      let board = Board(firstList: "Inbox", defaultFolder: lists, executor: mainQueueNow)
      _ = try await board.run(.save(nil))
      for (index, spelling) in spellings(of: lists, in: folder).enumerated() {
        _ = try await board.run(.add("Item \(index)"))
        _ = try await board.run(.save(spelling))
        #expect(try TodoFile.read(folder: lists).lists.first?.items.count == index + 1, "\(spelling)")
      }
      let other = Board(firstList: "Inbox", defaultFolder: lists, executor: mainQueueNow)
      _ = try await other.run(.load(folder.path + "/linked"))
      _ = try await other.run(.add("Loaded, then saved"))
      _ = try await other.run(.save(nil))
      #expect(try TodoFile.read(folder: lists).lists.first?.items.last?.title == "Loaded, then saved")
    }

    @Test("load of a list name with a tab keeps the list's items; the board holds them all")
    func loadKeepsTheItemsOfANameWithATab() async throws {
      let (folder, lists) = try makeFolder("tab")
      defer { try? FileManager.default.removeItem(at: folder) }
      try Data(LoadTests.controlCharacters.utf8).write(to: lists.appendingPathComponent("todo.md"))
      let board = Board(firstList: "Inbox", defaultFolder: lists, executor: mainQueueNow)
      let output = try await board.run(.load(nil))
      #expect(output?.hasPrefix("Loaded 2 lists from") == true)
      #expect(board.lists.map(\.view.name) == ["In box", "Work [1m"])
      #expect(board.lists.map { $0.store.computed.items.value.map(\.title) } == [["Milk", "Eggs"], ["Ship it"]])
    }

    @Test("load with changes that are not saved is refused and changes nothing; load --discard loads")
    func loadWithUnsavedChangesIsRefusedUnlessDiscarding() async throws {
      let (folder, lists) = try makeFolder("unsaved")
      defer { try? FileManager.default.removeItem(at: folder) }
      try Data(FileFaultTests.oldFile.utf8).write(to: lists.appendingPathComponent("todo.md"))
      let board = Board(firstList: "Inbox", defaultFolder: lists, executor: mainQueueNow)
      // An empty Inbox, as the board begins, holds nothing to lose.
      _ = try await board.run(.load(nil))
      _ = try await board.run(.add("New"))
      await #expect(throws: CommandError.self) { try await board.run(.load(nil)) }
      #expect(board.list(named: "Old")?.store.computed.items.value.map(\.title) == ["Kept", "New"])
      _ = try await board.run(.remove(2))
      _ = try await board.run(.load(nil))  // back as loaded: nothing to lose
      _ = try await board.run(.new("Work"))
      _ = try await board.run(.load(nil, discarding: true))
      #expect(board.lists.map(\.view.name) == ["Old"])
    }
  }
}
