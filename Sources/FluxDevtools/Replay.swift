import FluxCore

/// Dispatches the actions of a ``Recording`` again, into stores found by their labels, to
/// reproduce a session.
///
/// ```swift
/// let recording = try Recording(contentsOf: URL(fileURLWithPath: "session.jsonl"))
/// let counter = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
/// let replay = Replay(recording)
/// replay.route("counter", to: counter.actions)
/// try await replay.run()  // counter now holds what the recorded store held
/// ```
///
/// ``run(isolation:)`` first decodes every action it will dispatch, with the action type of its
/// route; a log with a label no route takes, or with an action of the wrong type, throws a
/// ``RecordingError`` naming the line, and nothing is dispatched. Then it dispatches the
/// committed actions, one at a time, in the order of the log, each after the previous one's
/// commit: `dispatchAndWait`, so the order holds across stores on different executors. Each is
/// dispatched from the caller's isolation, so a store on `.immediate` replayed from the main
/// actor commits there.
/// Cancelled actions are not dispatched: their stores did not commit them. A log that writes
/// `sequence` (``ActionLog/Fields/sequence``) must have its lines in that order, or the replay
/// throws before it dispatches anything. An action that a global dispatch sent to several stores
/// (lines that share a `dispatch`) is dispatched again to each of their routes, one line at a
/// time, in the order of the log.
///
/// Stores that come and go during the session are found by a resolving route, asked at each
/// action's turn:
///
/// ```swift
/// replay.route(CounterState.self) { label in counters[label]?.actions }
/// ```
///
/// > Important: The log holds every action its stores committed, follow-ups included: an action
/// > that a mutation, a middleware or an observer dispatched in response to another is a line
/// > of its own, and the replay dispatches it too. Replay into stores that dispatch no
/// > follow-ups of their own (give them none of the middleware or observers that do), or each
/// > follow-up is committed twice: once dispatched by the replayed store, once by the replay.
///
/// > Important: Not `Sendable`: make it, route it and run it in one isolation (a test, or the
/// > main actor). The resolving functions run there, in that isolation.
public final class Replay {
  private let recording: Recording
  private var exact: [String: Route] = [:]
  private var resolving: [Route] = []

  /// Prepares to replay `recording`; nothing is dispatched before ``run(isolation:)``.
  ///
  /// - Parameter recording: The actions to dispatch again.
  public init(_ recording: Recording) {
    self.recording = recording
  }

  /// Sends the actions labelled `label` to `actions`.
  ///
  /// Labels compare as Swift strings do: two that differ only in Unicode normalization (`é` as
  /// one scalar or as `e` and a combining accent) are one label, and a second route for it
  /// replaces the first.
  ///
  /// - Parameters:
  ///   - label: The store's label in the log.
  ///   - actions: Where its actions go: a store's `actions`.
  public func route<State: FluxCore.State>(_ label: String, to actions: Actions<State>)
  where State.Action: Decodable {
    exact[label] = Route(State.self, labels: { $0 == label }, resolve: { _ in actions })
  }

  /// Sends the actions of every label that `labels` accepts, and that no exact route takes, to
  /// the store `resolve` finds for that label when the action's turn comes.
  ///
  /// - Parameters:
  ///   - state: The state type of those stores; their actions are decoded as its actions.
  ///   - labels: Which labels this route takes; every label by default.
  ///   - resolve: The store's `actions` for a label, or `nil` if there is none.
  public func route<State: FluxCore.State>(
    _ state: State.Type,
    labels: @escaping (String) -> Bool = { _ in true },
    to resolve: @escaping (String) -> Actions<State>?
  ) where State.Action: Decodable {
    resolving.append(Route(state, labels: labels, resolve: resolve))
  }

  /// Checks every action, then dispatches the committed ones in order.
  ///
  /// - Parameter isolation: The caller's isolation, where the resolving routes run; leave the
  ///   default.
  /// - Returns: How many actions were committed again.
  /// - Throws: A ``RecordingError`` naming the line: before anything is dispatched when a label
  ///   has no route, an action does not decode, or the lines are out of their `sequence`; during the replay when a resolving route
  ///   finds no store, or the store an action goes to has been freed (it drops the action).
  ///   The actions before that line have been dispatched.
  @discardableResult
  public func run(isolation: isolated (any Actor)? = #isolation) async throws(RecordingError) -> Int {
    try recording.checkSequence()
    var steps: [(entry: Recording.Entry, step: Route.Step)] = []
    for entry in recording.entries where entry.outcome == .committed {
      guard let route = exact[entry.store] ?? resolving.first(where: { $0.labels(entry.store) }) else {
        throw RecordingError(line: entry.line, "no store to replay \"\(entry.store)\" into")
      }
      steps.append((entry, try route.prepare(entry)))
    }
    var committed = 0
    for (entry, step) in steps {
      guard let dispatch = step(entry.store) else {
        throw RecordingError(line: entry.line, "there is no store \"\(entry.store)\" when its action comes")
      }
      switch await dispatch(isolation) {
      case .committed: committed += 1
      case .cancelled: break
      case .storeFreed:
        throw RecordingError(line: entry.line, "the store of \"\(entry.store)\" has been freed when its action comes")
      }
    }
    return committed
  }
}

/// How to decode and dispatch the actions of some labels.
private struct Route {
  /// What became of one dispatched action.
  enum Outcome {
    case committed
    /// A middleware cancelled it.
    case cancelled
    /// The store was freed before it could commit it (or had been).
    case storeFreed
  }

  /// Finds the target for a label and returns its dispatch, from the isolation it is given, or
  /// `nil` if there is none.
  typealias Step = (String) -> ((isolated (any Actor)?) async -> Outcome)?

  let labels: (String) -> Bool
  let prepare: (Recording.Entry) throws(RecordingError) -> Step

  init<State: FluxCore.State>(
    _ state: State.Type, labels: @escaping (String) -> Bool, resolve: @escaping (String) -> Actions<State>?
  ) where State.Action: Decodable {
    self.labels = labels
    self.prepare = { (entry: Recording.Entry) throws(RecordingError) -> Step in
      let action = try entry.action(as: State.Action.self)
      return { label in
        guard let actions = resolve(label) else { return nil }
        return { isolation in
          if await actions.dispatchAndWait(action: action, isolation: isolation) { return .committed }
          // Not committed: cancelled by a middleware, or dropped by a store freed meanwhile.
          return actions.reachesAStore ? .cancelled : .storeFreed
        }
      }
    }
  }
}
