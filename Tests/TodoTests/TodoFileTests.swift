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
      (saved.replacingOccurrences(of: "2 lists", with: "3 lists"), "line 10: the end line does not count 2 lists"),
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
}
