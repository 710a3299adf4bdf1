import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import todo

extension ListStoreSuites {
  @Suite("A recorded session carries the states")
  @MainActor
  struct RecordedStateTests {
    @Test("each committed line of a recording holds the state its store was left in")
    func committedLinesCarryTheState() async throws {
      let lines = Lines()
      let board = Board(
        firstList: "Inbox", defaultFolder: URL(fileURLWithPath: "/nonexistent"),
        log: ActionLog(output: lines.output, fields: .all), executor: mainQueueNow)
      for command in [Command.add("Milk"), .add("Eggs"), .done(2), .new("Work"), .clearAll] {
        _ = try await board.run(command)
      }
      board.log?.flush()  // the log's queue writes the lines
      let entries = try Recording(jsonLines: lines.text).entries
      #expect(!entries.isEmpty && entries.allSatisfy { $0.outcome == .committed && $0.hasState })
      let inbox = entries.filter { $0.store == "list:Inbox" }
      let items = try inbox.map { try #require(try $0.state(as: [TodoItem].self)) }
      #expect(items.map { $0.map(\.title) } == [["Milk"], ["Milk", "Eggs"], ["Milk", "Eggs"], ["Milk"]])
      #expect(items[2].map(\.isDone) == [false, true])
      let lists = try #require(try entries.first { $0.store == Board.boardLabel }?.state(as: Lists.self))
      #expect(lists.entries.map(\.name) == ["Inbox", "Work"] && lists.current == "Work")
      // `clear all` reaches every list at once: one global dispatch, one id on its lines.
      let cleared = entries.suffix(2)
      #expect(Set(cleared.map(\.store)) == ["list:Inbox", "list:Work"])
      #expect(cleared.allSatisfy { $0.dispatch != nil } && Set(cleared.map(\.dispatch)).count == 1)
      #expect(entries.map(\.sequence) == (1...entries.count).map { UInt64($0) })
      withExtendedLifetime(board) {}  // optimized builds free a store after its last use
    }
  }
}
