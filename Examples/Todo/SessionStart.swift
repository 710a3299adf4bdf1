import FluxDevtools

// How a test generated from a recorded session (`flux-inspector session.jsonl --swift-test
// FILE`) makes each store as the session began: a list's store by its label, `list:` and its
// name; the board as `todo` starts it, with the list Inbox.

extension TodoListState: SessionTestable {
  static func sessionStart(label: String) -> TodoListState {
    TodoListState(name: String(label.dropFirst(Board.listLabelPrefix.count)))
  }
}

extension BoardState: SessionTestable {
  static func sessionStart(label: String) -> BoardState {
    BoardState(firstList: Board.firstList)
  }
}
