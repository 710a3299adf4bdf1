import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import todo

/// Lines kept in memory.
final class Lines: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var lines: [String] = []

  var output: ActionLogOutput {
    ActionLogOutput { line in self.lock.withLock { self.lines.append(line) } }
  }

  var text: String { lock.withLock { lines.joined() } }
}

extension ListStoreSuites {
  /// The board of the app, on the main queue at once (`mainQueueNow`): each command's commits, and the views they update,
  /// are done when it returns, whatever else the test process runs on the main queue.
  @Suite("Recording and replaying a session")
  @MainActor
  struct SessionTests {
    let nowhere = URL(fileURLWithPath: "/nonexistent")

    static let script: [Command] = [
      .add("Milk"), .add("Eggs"), .done(2), .new("Work"), .add("Ship it"), .new("Home"), .drop("Home"),
      .use("Inbox"), .clearAll, .add("Bread"),
    ]

    func run(_ commands: [Command], on board: Board) async throws {
      for command in commands { _ = try await board.run(command) }
    }

    @Test("a replayed recording leaves every list, and the current one, as the session did")
    func replayReproduces() async throws {
      let lines = Lines()
      let recorded = Board(
        firstList: "Inbox", defaultFolder: nowhere, log: ActionLog(output: lines.output), executor: mainQueueNow)
      try await run(Self.script, on: recorded)
      let replayed = Board(firstList: "Inbox", defaultFolder: nowhere, executor: mainQueueNow)
      recorded.log?.flush()  // the log's queue writes the lines
      let count = try await Session.replay(try Recording(jsonLines: lines.text), into: replayed, from: "memory")
      #expect(count == 11)
      let expected = try await recorded.run(.lists)
      let actual = try await replayed.run(.lists)
      #expect(actual == expected)
      #expect(replayed.current == "Inbox")
    }

    @Test("time travel sets a list back to what it held after any action of the recording")
    func timeTravel() async throws {
      let lines = Lines()
      let board = Board(
        firstList: "Inbox", defaultFolder: nowhere, log: ActionLog(output: lines.output), executor: mainQueueNow)
      try await run(Self.script, on: board)
      board.log?.flush()  // the log's queue writes the lines
      let recording = try Recording(jsonLines: lines.text)
      let travel = try TimeTravel(
        recording, label: "list:Inbox", from: TodoListState(name: "Inbox"), mutations: .init())
      let inbox = try #require(board.list(named: "Inbox")).store
      await travel.goTo(3, in: inbox)  // after add Milk, add Eggs, done 2
      #expect(inbox.computed.items.value.map(\.isDone) == [false, true])
      await travel.goTo(travel.count, in: inbox)
      #expect(inbox.computed.items.value.map(\.title) == ["Milk", "Bread"])
    }

    @Test("a dropped list's store is freed")
    func droppedListIsFreed() async throws {
      try await withLeakTracking { leaks in
        let board = Board(firstList: "Inbox", defaultFolder: nowhere, executor: mainQueueNow)
        _ = try await board.run(.new("Home"))
        leaks.track(try #require(board.list(named: "Home")).store)
        _ = try await board.run(.drop("Home"))
        #expect(board.list(named: "Home") == nil)
      }
    }

    @Test("load replaces every list with the file's, through actions a recording keeps")
    func load() async throws {
      let lines = Lines()
      let board = Board(
        firstList: "Inbox", defaultFolder: nowhere, log: ActionLog(output: lines.output), executor: mainQueueNow)
      board.load(try TodoFile.parse(TodoFileTests.saved))
      let loaded = try await board.run(.lists)
      #expect(loaded == "* Inbox  1 of 2 done\n  Work   empty")
      let replayed = Board(firstList: "Inbox", defaultFolder: nowhere, executor: mainQueueNow)
      board.log?.flush()  // the log's queue writes the lines
      #expect(try await Session.replay(try Recording(jsonLines: lines.text), into: replayed, from: "memory") == 3)
      let actual = try await replayed.run(.lists)
      #expect(actual == loaded)
    }

    /// A line of a log of the board's store.
    static func boardLine(_ action: String) -> String {
      #"{"action":"# + action + #","outcome":"committed","store":"board","time":"2026-11-23T03:07:49.123Z"}"# + "\n"
    }

    @Test(
      "a replay of board actions that the commands would refuse leaves a valid board",
      arguments: [
        [#"{"create":{"name":"Inbox"}}"#, #"{"drop":{"name":"Inbox"}}"#],
        [#"{"replace":{"names":["A","A"]}}"#, #"{"drop":{"name":"A"}}"#],
        [#"{"create":{"name":"Work"}}"#, #"{"replace":{"names":[]}}"#, #"{"drop":{"name":"Work"}}"#],
      ])
    func replayOfActionsTheCommandsRefuse(actions: [String]) async throws {
      let board = Board(firstList: "Inbox", defaultFolder: nowhere, executor: mainQueueNow)
      let recording = try Recording(jsonLines: actions.map(Self.boardLine).joined())
      _ = try await Session.replay(recording, into: board, from: "memory")
      #expect(!board.lists.isEmpty)
      #expect(board.list(named: board.current) != nil)
      _ = try await board.run(.add("Milk"))
      #expect(try await board.run(.show)?.contains("1. [ ] Milk") == true)
    }

    @Test("rule 17: save after a load that failed does not replace the file it could not read, unless asked")
    func inv17_saveAfterAFailedLoad() async throws {
      let folder = try Faults.temporaryFolder("failed-load")
      defer { try? FileManager.default.removeItem(at: folder) }
      let file = folder.appendingPathComponent("todo.md")
      let notATodoFile = Data("# Notes\n\nmine\n".utf8)
      try notATodoFile.write(to: file)
      let board = Board(firstList: "Inbox", defaultFolder: folder, executor: mainQueueNow)
      #expect(throws: CommandError.self) { _ = try board.read(folder: folder) }
      _ = try await board.run(.add("Milk"))
      let error = await #expect(throws: CommandError.self) { try await board.run(.save(nil)) }
      #expect(error?.message.hasPrefix("save does not replace \(file.path): it could not be read (line 1:") == true)
      #expect(FileManager.default.contents(atPath: file.path) == notATodoFile)
      _ = try await board.run(.save(nil, replacing: true))
      #expect(try TodoFile.read(folder: folder).lists.first?.items.map(\.title) == ["Milk"])
    }

    @Test("in quiet mode an item command returns the row it changed")
    func quiet() async throws {
      let board = Board(firstList: "Inbox", defaultFolder: nowhere, executor: mainQueueNow)
      board.isQuiet = true
      #expect(try await board.run(.add("Milk")) == "  1. [ ] Milk")
      #expect(try await board.run(.add("Eggs")) == "  2. [ ] Eggs")
      #expect(try await board.run(.done(1)) == "  1. [x] Milk")
      #expect(try await board.run(.clear) == "Inbox — 0 of 1 done")
    }
  }
}
