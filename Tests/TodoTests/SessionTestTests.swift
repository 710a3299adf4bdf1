import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import todo

@Suite("A list holds one item of a title that is not done")
struct NoDuplicateItemsTests {
  @Test("an add of a title the list has, not done, in any case, is cancelled; once that item is done, it is not")
  func duplicateAddCancelled() async {
    let list = StoreTester<TodoListState>(
      state: .init(name: "Inbox"), mutations: .init(), middlewares: [AnyMiddleware(NoDuplicateItems())])
    await list.dispatch(.add(title: "Milk"))
    await list.dispatch(.add(title: " milk\t"), committed: [], cancelled: [.add(title: " milk\t")])
    await list.dispatch(.setDone(id: 1, isDone: true))
    await list.dispatch(.add(title: "MILK"), reading: { $0.items.value.map(\.title) }, equals: ["Milk", "MILK"])
    list.finish()
  }
}

@Suite("The board goes back to a snapshot")
struct BoardRestoreTests {
  @Test("restore takes the lists back, ids and all; what would break the board is left out")
  func restoreKeepsTheBoardValid() async {
    let board = StoreTester(state: BoardState(firstList: "Inbox"), mutations: BoardMutations())
    await board.dispatch(.create(name: "Work"))
    let snapshot = board.computed.state.snapshot
    await board.dispatch(.replace(names: ["Home"]))
    await board.dispatch(.restore(lists: snapshot), reading: \.lists.value, equals: snapshot)
    var broken = snapshot
    broken.entries += [ListEntry(id: 9, name: "inbox"), ListEntry(id: 2, name: "Again"), ListEntry(id: 40, name: "")]
    broken.current = "Gone"
    broken.nextID = 1
    await board.dispatch(.restore(lists: broken)) { board in
      let lists = board.lists.value
      return lists.entries == snapshot.entries && lists.current == "Inbox" && lists.nextID == 3
    }
    await board.dispatch(
      .restore(lists: Lists(entries: [], current: "", nextID: 1)), reading: \.lists.value,
      equals: snapshot.withCurrent("Inbox"))
    board.finish()
  }
}

extension Lists {
  fileprivate func withCurrent(_ name: String) -> Lists {
    var lists = self
    lists.current = name
    return lists
  }
}

extension ListStoreSuites {
  @Suite("A recorded session carries what a generated test needs")
  @MainActor
  struct SessionTestFieldsTests {
    @Test("every line of `todo --record` names the state type and writes the action as Swift; states are snapshots")
    func recordedForTests() async throws {
      let lines = Lines()
      let board = Board(
        firstList: Board.firstList, defaultFolder: URL(fileURLWithPath: "/nonexistent"),
        log: ActionLog(output: lines.output, fields: [.all, .swift]), executor: mainQueueNow)
      for command in [Command.add("Milk"), .add("Eggs"), .done(2), .new("Work"), .use("Inbox"), .clearAll] {
        _ = try await board.run(command)
      }
      await #expect(throws: CommandError.self) { try await board.run(.add("milk")) }
      board.log?.flush()  // the log's queue writes the lines
      let test = try SessionTest(Recording(jsonLines: lines.text), source: "memory")
      #expect(test.leftOut.isEmpty)
      #expect(test.stores == ["list:Inbox", "board", "list:Work"])
      #expect(test.text.contains(#"let tester = StoreTester<TodoListState>("#))
      #expect(test.text.contains("middlewares: [AnyMiddleware(NoDuplicateItems())]"))
      #expect(test.text.contains(#"cancelled: [.add(title: "milk")]"#))
      #expect(test.text.contains(#".create(name: "Work")"#))
      withExtendedLifetime(board) {}  // optimized builds free a store after its last use
    }

    @Test("a store begins a generated test as todo begins it: a list named after its label, the board with Inbox")
    func sessionStart() {
      #expect(TodoListState.sessionStart(label: "list:Groceries").name == "Groceries")
      #expect(BoardState.sessionStart(label: Board.boardLabel).snapshot == Lists(first: "Inbox"))
    }
  }
}
