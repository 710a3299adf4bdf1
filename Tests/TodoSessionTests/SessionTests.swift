// Generated from a Flux session: regenerate this file rather than edit it.
// Source: Tests/TodoSessionTests/session.jsonl.
// Recorded from 2026-11-27T11:31:05.704Z to 2026-11-27T11:31:05.706Z: 16 actions of 4 stores.
// Each test makes one store as its session began (SessionTestable), dispatches its actions in the
// order of the log, and checks what the store committed, what middleware cancelled, and its state
// after each action against the state the log recorded there.
// The test runs what the log holds: read it as code from wherever the log came from.

import FluxTesting
import Testing

@testable import todo

@Suite("The session of Tests/TodoSessionTests/session.jsonl")
struct SessionTests {
  @Test("list:Inbox")
  func listInbox() async {
    let tester = StoreTester<TodoListState>(session: "list:Inbox", mutations: .init())
    await tester.dispatch(
      .add(title: "Call the plumber"), sessionLine: 1,
      recorded: #"[{"id": 1, "isDone": false, "title": "Call the plumber"}]"#)
    await tester.dispatch(
      .add(title: "Renew the passport"), sessionLine: 2,
      recorded: #"""
        [
          {"id": 1, "isDone": false, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"}
        ]
        """#)
    await tester.dispatch(
      .setDone(id: 1, isDone: true), sessionLine: 3,
      recorded: #"""
        [
          {"id": 1, "isDone": true, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"}
        ]
        """#)
    // A global dispatch, which reached 3 stores.
    await tester.dispatch(
      .clearCompleted, sessionLine: 12,
      recorded: #"[{"id": 2, "isDone": false, "title": "Renew the passport"}]"#)
    await tester.dispatch(
      .rename(id: 2, title: "Renew the passport before May"), sessionLine: 16,
      recorded: #"[{"id": 2, "isDone": false, "title": "Renew the passport before May"}]"#)
    tester.finish()
  }

  @Test("board")
  func board() async {
    let tester = StoreTester<BoardState>(session: "board", mutations: .init())
    await tester.dispatch(
      .create(name: "Groceries"), sessionLine: 4,
      recorded: #"""
        {
          "current": "Groceries",
          "entries": [{"id": 1, "name": "Inbox"}, {"id": 2, "name": "Groceries"}],
          "nextID": 3
        }
        """#)
    await tester.dispatch(
      .create(name: "Work"), sessionLine: 9,
      recorded: #"""
        {
          "current": "Work",
          "entries": [
            {"id": 1, "name": "Inbox"},
            {"id": 2, "name": "Groceries"},
            {"id": 3, "name": "Work"}
          ],
          "nextID": 4
        }
        """#)
    await tester.dispatch(
      .use(name: "Inbox"), sessionLine: 15,
      recorded: #"""
        {
          "current": "Inbox",
          "entries": [
            {"id": 1, "name": "Inbox"},
            {"id": 2, "name": "Groceries"},
            {"id": 3, "name": "Work"}
          ],
          "nextID": 4
        }
        """#)
    tester.finish()
  }

  @Test("list:Groceries")
  func listGroceries() async {
    let tester = StoreTester<TodoListState>(
      session: "list:Groceries", mutations: .init(),
      middlewares: [AnyMiddleware(NoDuplicateItems())])
    await tester.dispatch(
      .add(title: "Milk"), sessionLine: 5,
      recorded: #"[{"id": 1, "isDone": false, "title": "Milk"}]"#)
    await tester.dispatch(
      .add(title: "Bread"), sessionLine: 6,
      recorded: #"""
        [{"id": 1, "isDone": false, "title": "Milk"}, {"id": 2, "isDone": false, "title": "Bread"}]
        """#)
    // Cancelled by NoDuplicateItems.
    await tester.dispatch(
      .add(title: "milk"), committed: [], cancelled: [.add(title: "milk")], sessionLine: 7)
    await tester.dispatch(
      .setDone(id: 2, isDone: true), sessionLine: 8,
      recorded: #"""
        [{"id": 1, "isDone": false, "title": "Milk"}, {"id": 2, "isDone": true, "title": "Bread"}]
        """#)
    // A global dispatch, which reached 3 stores.
    await tester.dispatch(
      .clearCompleted, sessionLine: 13, recorded: #"[{"id": 1, "isDone": false, "title": "Milk"}]"#)
    tester.finish()
  }

  @Test("list:Work")
  func listWork() async {
    let tester = StoreTester<TodoListState>(session: "list:Work", mutations: .init())
    await tester.dispatch(
      .add(title: "Review the pull request"), sessionLine: 10,
      recorded: #"[{"id": 1, "isDone": false, "title": "Review the pull request"}]"#)
    await tester.dispatch(
      .setDone(id: 1, isDone: true), sessionLine: 11,
      recorded: #"[{"id": 1, "isDone": true, "title": "Review the pull request"}]"#)
    // A global dispatch, which reached 3 stores.
    await tester.dispatch(.clearCompleted, sessionLine: 14, recorded: #"[]"#)
    tester.finish()
  }
}
