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

  @Test(
    "a restore keeps the first list of each id and of each name (whatever its case), in order; 20,000 lists restore in one pass"
  )
  func restoreKeepsFirstOfEachIdAndName() async {
    let board = makeTester()
    let many = (0..<20_000).map { ListEntry(id: $0 + 1, name: "List \($0)") }
    let restored = Lists(
      entries: [ListEntry(id: 1, name: "Again")] + many + [
        ListEntry(id: 30_000, name: "LIST 7"), ListEntry(id: 7, name: "New"),
      ],
      current: "List 19999", nextID: 2)
    await board.dispatch(.restore(lists: restored)) { board in
      let lists = board.lists.value
      return lists.entries.count == 20_000 && lists.entries.first == ListEntry(id: 1, name: "Again")
        && lists.entries[1] == ListEntry(id: 2, name: "List 1")
        && lists.entries.last == ListEntry(id: 20_000, name: "List 19999")
        && lists.current == "List 19999" && lists.nextID == 20_001
    }
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

  @Test("create of a name a list has already, in any case, changes nothing")
  func createOfAnExistingNameChangesNothing() async {
    let board = makeTester()
    await board.dispatch(.create(name: "Work"))
    await board.dispatch(.create(name: "inbox"))
    await board.dispatch(.create(name: "Inbox"))
    board.expect(reading: { $0.lists.value.entries.map(\.name) }, equals: ["Inbox", "Work"])
    board.expect(reading: \.lists.value.current, equals: "Work")
    board.finish()
  }

  @Test("create then drop of the first list's name leaves that list, the only one")
  func createThenDropOfTheOnlyName() async {
    let board = makeTester()
    await board.dispatch(.create(name: "Inbox"))
    await board.dispatch(.drop(name: "Inbox"))
    board.expect(reading: { $0.lists.value.entries.map(\.name) }, equals: ["Inbox"])
    board.expect(reading: \.lists.value.current, equals: "Inbox")
    board.finish()
  }

  @Test("replace with a name twice keeps its first; a drop of it leaves the other lists")
  func replaceWithDuplicatesThenDrop() async {
    let board = makeTester()
    await board.dispatch(.replace(names: ["A", "a", "B", "A"]))
    board.expect(reading: { $0.lists.value.entries.map(\.name) }, equals: ["A", "B"])
    await board.dispatch(.drop(name: "A"))
    board.expect(reading: { $0.lists.value.entries.map(\.name) }, equals: ["B"])
    board.expect(reading: \.lists.value.current, equals: "B")
    await board.dispatch(.replace(names: []))
    board.expect(reading: { $0.lists.value.entries.map(\.name) }, equals: ["B"])
    board.finish()
  }

  @Test("a name with a control character becomes one without it")
  func controlCharactersInANameBecomeSpaces() async {
    let board = makeTester()
    await board.dispatch(.create(name: "Two\nlines"))
    board.expect(reading: \.lists.value.current, equals: "Two lines")
    board.finish()
  }
}
