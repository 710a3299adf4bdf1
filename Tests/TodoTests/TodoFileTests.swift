import FluxTesting
import Testing

@testable import todo

@Suite("The todo file")
struct TodoFileTests {
  static let saved = """
    # Todo

    ## Inbox

    - [ ] Milk
    - [x] Eggs

    ## Work

    <!-- end of todo: 2 lists -->

    """

  @Test("load reads what save writes")
  func roundTrip() throws {
    let lists = try TodoFile.parse(Self.saved)
    #expect(lists.map(\.name) == ["Inbox", "Work"])
    #expect(
      lists[0].items == [TodoItem(id: 1, title: "Milk", isDone: false), TodoItem(id: 2, title: "Eggs", isDone: true)])
    let written = "# Todo\n\n" + lists.map(\.markdown).joined() + TodoFile.trailer(lists: 2) + "\n"
    #expect(try TodoFile.parse(written) == lists)
  }

  @Test(
    "a bad or cut-short file is an error that says what is wrong",
    arguments: [
      (String(saved.prefix(40)), "the file is cut short: its end line is missing"),
      (
        saved.replacingOccurrences(of: "2 lists", with: "3 lists"),
        "line 10: the end line says \"<!-- end of todo: 3 lists -->\", but the file has 2 lists"
      ),
      (
        saved.replacingOccurrences(of: "- [x] Eggs", with: "* Eggs"),
        "line 6: not a list, an item or the end line: * Eggs"
      ),
      (saved.replacingOccurrences(of: "## Work", with: "## inbox"), "line 8: there are two lists named \"inbox\""),
      ("# Notes\n" + saved, "line 1: a todo file starts with \"# Todo\""),
    ])
  func badFile(text: String, message: String) {
    let error = #expect(throws: CommandError.self) { try TodoFile.parse(text) }
    #expect(error?.message == message)
  }

  @Test("a file with CRLF line ends reads as the same file with LF")
  func crlf() throws {
    #expect(try TodoFile.parse(Self.saved.replacingOccurrences(of: "\n", with: "\r\n")) == TodoFile.parse(Self.saved))
  }

  @Test("one CRLF line end does not make an item part of a list's name")
  func oneCRLF() throws {
    let lists = try TodoFile.parse(Self.saved.replacingOccurrences(of: "## Inbox\n", with: "## Inbox\r\n"))
    #expect(lists.map(\.name) == ["Inbox", "Work"])
    #expect(lists[0].items.map(\.title) == ["Milk", "Eggs"])
  }

  @Test("a file that is not a todo file says so, not that it is cut short")
  func headerFirst() {
    for text in ["# Notes\nsome text\n", "hello"] {
      let error = #expect(throws: CommandError.self) { try TodoFile.parse(text) }
      #expect(error?.message == "line 1: a todo file starts with \"# Todo\"")
    }
  }

  @Test("a byte order mark before the header is not part of it")
  func byteOrderMark() throws {
    #expect(try TodoFile.parse(bytes: [0xEF, 0xBB, 0xBF] + Array(Self.saved.utf8)) == TodoFile.parse(Self.saved))
  }

  @Test("a file that is not UTF-8 names the byte")
  func notUTF8() {
    let error = #expect(throws: CommandError.self) { try TodoFile.parse(bytes: Array("# Todo\n".utf8) + [0xC3, 0x28]) }
    #expect(error?.message == "the file is not UTF-8 at byte 8")
  }

  @Test("a title with a line break that reaches a list by an action is saved in a form load reads")
  func titleWithALineBreak() async throws {
    let store = StoreTester(state: TodoListState(name: "Inbox"), mutations: TodoMutations())
    await store.dispatch(.add(title: "two\nlines"))
    let snapshot = ListSnapshot(name: "Inbox", items: store.computed.items.value)
    store.finish()
    let written = "# Todo\n\n" + snapshot.markdown + TodoFile.trailer(lists: 1) + "\n"
    #expect(try TodoFile.parse(written).first?.items.map(\.title) == ["two lines"])
  }
}
