import Foundation

extension StoreTester where State: SessionTestable {
  /// Creates a tester of the store labelled `label` in a recorded session, as a test generated
  /// from the session (`SessionTest`) makes it.
  ///
  /// ```swift
  /// let tester = StoreTester<TodoListState>(session: "list:Inbox", mutations: .init())
  /// await tester.dispatch(.add(title: "Milk"), sessionLine: 3, recorded: #"[{"id": 1, "isDone": false, "title": "Milk"}]"#)
  /// tester.finish()
  /// ```
  ///
  /// The store begins with `SessionTestable.sessionStart(label:)`, commits on `.immediate`, and
  /// stays apart from the rest of the process: no global dispatch (`Store<S>.actions`) reaches
  /// it, and no shared middleware wraps it, so tests that run at the same time, of the same state
  /// type, neither reach it nor are reached. The session's global dispatches are dispatched to it
  /// alone, as its own.
  ///
  /// - Parameters:
  ///   - label: The store's label in the session.
  ///   - mutations: The state's mutations.
  ///   - middlewares: The store's middleware (those that cancelled actions in the session), first
  ///     given first; the tester's recorder comes after them.
  public convenience init(session label: String, mutations: State.Mutations, middlewares: [AnyMiddleware<State>] = []) {
    self.init(session: label, state: State.sessionStart(label: label), mutations: mutations, middlewares: middlewares)
  }

  /// Dispatches the action of line `sessionLine` of the session, then asserts which actions the
  /// store committed and cancelled and, if given, that its state is the one the session recorded.
  ///
  /// ```swift
  /// await tester.dispatch(.add(title: "milk"), committed: [], cancelled: [.add(title: "milk")], sessionLine: 8)
  /// ```
  ///
  /// The state compared is the state's `Snapshotting.snapshot`, encoded as JSON, as an
  /// `ActionLog` writes it, against `recorded`: as values (`1` and `1.0` are one number; the order
  /// of an object's keys does not count). A failure names the line and the action, and shows the
  /// recorded and the actual state side by side, a mark on each line that differs:
  ///
  /// ```
  /// line 9 of the session, list:Inbox, after dispatching setDone(id: 2, isDone: true): the state is not as recorded
  ///     recorded                                 actual
  ///     [                                        [
  ///       {"id": 1, "isDone": false, "title": …    {"id": 1, "isDone": false, "title": …
  ///   ~   {"id": 2, "isDone": true, "title": …     {"id": 2, "isDone": false, "title": …
  ///     ]                                        ]
  /// ```
  ///
  /// Only the first difference of the session fails the test: every state after it would differ
  /// too. The actions after it are dispatched, and nothing more is checked.
  ///
  /// - Parameters:
  ///   - action: The action of the line.
  ///   - committed: Every action the store should have committed, in order; `[action]` by default.
  ///   - cancelled: Every action middleware should have cancelled, in order; none by default.
  ///   - sessionLine: The line of the session, counted from 1, for the failure.
  ///   - recorded: The state the session recorded after the action, as JSON; `nil` to check none.
  ///   - isolation: The caller's isolation; leave the default.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  public func dispatch(
    _ action: State.Action,
    committed: [State.Action]? = nil,
    cancelled: [State.Action] = [],
    sessionLine: Int,
    recorded: String? = nil,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let session = session ?? SessionProgress(label: nil)
    store.actions.dispatch(action: action)
    guard !session.hasDiffered else {
      // After the first difference: the store goes on, unchecked.
      _ = await settle(expecting: 0, isolation: isolation)
      return
    }
    let context =
      "line \(sessionLine) of the session" + (session.label.map { ", \($0)" } ?? "")
      + ", after dispatching \(action)"
    guard
      await check(context, committed: committed ?? [action], cancelled: cancelled, isolation: isolation, at: site)
    else {
      session.differ()
      return
    }
    guard let recorded else { return }
    if let difference = StateDiff.difference(recorded: recorded, actual: store.computed.state.snapshot) {
      session.differ()
      fail("\(context): \(difference)", at: site, harness: harness)
    }
  }
}

extension StoreTester where State: SessionTestable {
  /// Sets the store to the state the session recorded at line `sessionLine`, through the state's
  /// `restore` action: where actions before that line are missing from the log (a gap in its
  /// `sequence`, or a log of a session's last actions), the store goes on from the state it had.
  ///
  /// ```swift
  /// // 412 actions of the session before this one are not in the log: the store takes the state recorded here.
  /// await tester.restore(sessionLine: 430, recorded: #"[{"id": 7, "isDone": false, "title": "Milk"}]"#)
  /// ```
  ///
  /// It decodes `recorded` as the state's `Snapshot`, dispatches `State.restore(snapshot)`, and
  /// asserts that the store committed it and that its state is then the recorded one. After a
  /// difference of the session, it dispatches the restore and checks nothing.
  ///
  /// - Parameters:
  ///   - sessionLine: The line of the session, counted from 1, for a failure.
  ///   - recorded: The state the session recorded there, as JSON.
  ///   - isolation: The caller's isolation; leave the default.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  public func restore(
    sessionLine: Int,
    recorded: String,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let session = session ?? SessionProgress(label: nil)
    let context = "line \(sessionLine) of the session" + (session.label.map { ", \($0)" } ?? "")
    let decoder = JSONDecoder()
    // As the log writes them (see `ActionLog`).
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    let snapshot: State.Snapshot
    do {
      // Read as JSON first: the decoder stops the process on some text nested too deep.
      _ = try JSONValue.parse(recorded)
      snapshot = try decoder.decode(State.Snapshot.self, from: Data(recorded.utf8))
    } catch {
      if !session.hasDiffered {
        session.differ()
        let cause = (error as? JSONValue.Failure)?.message ?? "\(error)"
        fail(
          "\(context): the recorded state is not a \(State.Snapshot.self), so the store cannot take it: \(cause)",
          at: site, harness: harness)
      }
      return
    }
    await dispatch(
      State.restore(snapshot), sessionLine: sessionLine, recorded: recorded, isolation: isolation, fileID: fileID,
      filePath: filePath, line: line, column: column)
  }
}

/// Where a tester of a session is: its store's label, and whether a difference was reported.
final class SessionProgress: Sendable {
  let label: String?
  private let lock = Lock()
  // Guarded by `lock`.
  nonisolated(unsafe) private var differed = false

  init(label: String?) {
    self.label = label
  }

  /// Whether a difference from the session was reported.
  var hasDiffered: Bool {
    lock.withLock { differed }
  }

  /// A difference from the session was reported.
  func differ() {
    lock.withLock { differed = true }
  }
}
