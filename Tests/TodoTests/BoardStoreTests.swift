import FluxCore
import FluxTesting
import Testing

@testable import todo

@Suite("The board's store")
struct BoardStoreTests {
  func makeTester() -> StoreTester<BoardState> {
    StoreTester(state: BoardState(firstList: "Inbox"), mutations: BoardMutations())
  }

  @Test("a new list becomes the current one")
  func create() async {
    let board = makeTester()
    await board.dispatch(.create(name: "Work"), reading: \.lists.value.current, equals: "Work")
    board.expect(reading: { $0.lists.value.entries.map(\.name) }, equals: ["Inbox", "Work"])
    board.finish()
  }

  @Test("dropping the current list makes the first one left current; the last list stays")
  func drop() async {
    let board = makeTester()
    await board.dispatch(.create(name: "Work"))
    await board.dispatch(.drop(name: "Work"), reading: \.lists.value.current, equals: "Inbox")
    await board.dispatch(.drop(name: "Inbox"), reading: \.lists.value.entries.count, equals: 1)
    board.finish()
  }

  @Test("replacing gives every list a new identity, even one of the same name")
  func replace() async {
    let board = makeTester()
    let before = board.computed.lists.value.entries.map(\.id)
    await board.dispatch(.replace(names: ["Inbox", "Home"])) { board in
      let lists = board.lists.value
      return lists.entries.map(\.name) == ["Inbox", "Home"] && lists.current == "Inbox"
        && Set(lists.entries.map(\.id)).isDisjoint(with: before)
    }
    board.finish()
  }
}
