// Generated from a Flux session: regenerate this file rather than edit it.
// Source: Tests/TodoSessionTests/live-session.jsonl.
// Recorded from 2026-11-27T13:02:10.000Z to 2026-11-27T13:02:18.800Z: 14 actions of 2 stores.
// Each test makes one store as its session began (SessionTestable), dispatches its actions in the
// order of the log, and checks what the store committed, what middleware cancelled, and its state
// after each action against the state the log recorded there.
// The test runs what the log holds: read it as code from wherever the log came from.

import FluxTesting
import Testing

@testable import todo

@Suite("The session of Tests/TodoSessionTests/live-session.jsonl")
struct LiveSessionTests {
  @Test("list:Inbox")
  func listInbox() async {
    let tester = StoreTester<TodoListState>(
      session: "list:Inbox", mutations: .init(), middlewares: [AnyMiddleware(NoDuplicateItems())])
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
    // Steered from the Inspector (jump).
    await tester.dispatch(
      .restore(items: [TodoItem(id: 1, title: "Call the plumber", isDone: false)]), sessionLine: 5,
      recorded: #"[{"id": 1, "isDone": false, "title": "Call the plumber"}]"#)
    await tester.dispatch(
      .add(title: "Buy stamps"), sessionLine: 6,
      recorded: #"""
        [
          {"id": 1, "isDone": false, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Buy stamps"}
        ]
        """#)
    // Steered from the Inspector (present).
    await tester.dispatch(
      .restore(
        items: [
          TodoItem(id: 1, title: "Call the plumber", isDone: true),
          TodoItem(id: 2, title: "Renew the passport", isDone: false),
          TodoItem(id: 3, title: "Buy stamps", isDone: false),
        ]),
      sessionLine: 7,
      recorded: #"""
        [
          {"id": 1, "isDone": true, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"},
          {"id": 3, "isDone": false, "title": "Buy stamps"}
        ]
        """#)
    // Steered from the Inspector (skip).
    await tester.dispatch(
      .restore(
        items: [
          TodoItem(id: 1, title: "Call the plumber", isDone: false),
          TodoItem(id: 2, title: "Renew the passport", isDone: false),
          TodoItem(id: 3, title: "Buy stamps", isDone: false),
        ]),
      sessionLine: 8,
      recorded: #"""
        [
          {"id": 1, "isDone": false, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"},
          {"id": 3, "isDone": false, "title": "Buy stamps"}
        ]
        """#)
    // Cancelled by NoDuplicateItems.
    // Steered from the Inspector (dispatch).
    await tester.dispatch(
      .add(title: "call the plumber"), committed: [], cancelled: [.add(title: "call the plumber")],
      sessionLine: 9)
    // Steered from the Inspector (dispatch).
    await tester.dispatch(
      .rename(id: 3, title: "Buy stamps and envelopes"), sessionLine: 10,
      recorded: #"""
        [
          {"id": 1, "isDone": false, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"},
          {"id": 3, "isDone": false, "title": "Buy stamps and envelopes"}
        ]
        """#)
    // A global dispatch, which reached 2 stores.
    await tester.dispatch(
      .clearCompleted, sessionLine: 12,
      recorded: #"""
        [
          {"id": 1, "isDone": false, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"},
          {"id": 3, "isDone": false, "title": "Buy stamps and envelopes"}
        ]
        """#)
    // Steered from the Inspector (unskip).
    await tester.dispatch(
      .restore(
        items: [
          TodoItem(id: 1, title: "Call the plumber", isDone: true),
          TodoItem(id: 2, title: "Renew the passport", isDone: false),
          TodoItem(id: 3, title: "Buy stamps and envelopes", isDone: false),
        ]),
      sessionLine: 14,
      recorded: #"""
        [
          {"id": 1, "isDone": true, "title": "Call the plumber"},
          {"id": 2, "isDone": false, "title": "Renew the passport"},
          {"id": 3, "isDone": false, "title": "Buy stamps and envelopes"}
        ]
        """#)
    tester.finish()
  }

  @Test("list:Work")
  func listWork() async {
    let tester = StoreTester<TodoListState>(session: "list:Work", mutations: .init())
    await tester.dispatch(
      .add(title: "Review the pull request"), sessionLine: 4,
      recorded: #"[{"id": 1, "isDone": false, "title": "Review the pull request"}]"#)
    await tester.dispatch(
      .setDone(id: 1, isDone: true), sessionLine: 11,
      recorded: #"[{"id": 1, "isDone": true, "title": "Review the pull request"}]"#)
    // A global dispatch, which reached 2 stores.
    await tester.dispatch(.clearCompleted, sessionLine: 13, recorded: #"[]"#)
    tester.finish()
  }
}
