import FluxCore

/// The states one store went through in a ``Recording``, to set a live store back to any of
/// them: ``goTo(_:in:isolation:)`` sets it to the state after the first `k` actions of the recording.
///
/// ```swift
/// let travel = try TimeTravel(recording, label: "counter", from: CounterState(), mutations: .init())
/// await travel.goTo(3, in: store)  // the state after the log's first three actions
/// await travel.goTo(0, in: store)  // the state before any
/// ```
///
/// It commits the store's committed actions once, in order, to the given state with the given
/// mutations, on the calling thread, and keeps a ``Snapshotting/snapshot`` after each action of
/// the log (actions of other stores leave it as it was). No store is made for that: no global
/// dispatch (`Store<S>.actions`) reaches the state meanwhile, and no middleware, shared or
/// not, sees those commits. A log that wrote the states (``ActionLog/middleware(label:for:snapshots:)``
/// with ``StateSnapshots/snapshot``) needs no mutations: ``init(_:label:from:)`` reads the
/// snapshots from it. Going to a point then dispatches
/// ``Snapshotting/restore(_:)``: the live store commits it like any action, through its
/// middleware.
public struct TimeTravel<State: Snapshotting>: Sendable where State.Action: Decodable {
  /// The snapshots: the first before any action, then one after each action of the recording.
  public let snapshots: [State.Snapshot]

  /// Commits the actions labelled `label` to `state`, keeping a snapshot after each action of
  /// the recording.
  ///
  /// - Parameters:
  ///   - recording: The log.
  ///   - label: The label of the store whose states to keep.
  ///   - state: A fresh state, as the recorded store began; consumed by the replay.
  ///   - mutations: Its mutations.
  /// - Throws: A ``RecordingError`` naming the line of an action that is not one of `State`, or
  ///   the log's labels when no action of a log that has some carries `label` (misspelt, most
  ///   likely: every snapshot would be `state`'s).
  public init(_ recording: Recording, label: String, from state: State, mutations: State.Mutations)
    throws(RecordingError)
  {
    try Self.check(recording, label: label)
    var snapshots = [state.snapshot]
    var actions: [State.Action?] = []
    for entry in recording.entries {
      let mine = entry.store == label && entry.outcome == .committed
      actions.append(mine ? try entry.action(as: State.Action.self) : nil)
    }
    for action in actions {
      if let action { mutations.commit(action: action, state: state) }
      snapshots.append(state.snapshot)
    }
    self.snapshots = snapshots
  }

  /// Reads the snapshots of the store labelled `label` from the `state` of its committed lines,
  /// as a log made with ``StateSnapshots/snapshot`` wrote them: nothing is committed.
  ///
  /// ```swift
  /// let travel = try TimeTravel(recording, label: "counter", from: CounterState())
  /// ```
  ///
  /// - Parameters:
  ///   - recording: The log.
  ///   - label: The label of the store whose states to keep.
  ///   - state: A state as the recorded store began: the snapshot before any action.
  /// - Throws: A ``RecordingError`` naming the line of a committed action of `label` without a
  ///   `state`, or whose state is not a `State.Snapshot` (a state written through `Mirror`,
  ///   ``StateSnapshots/mirror``, never is: it is there to be looked at); the log's labels when no action
  ///   carries `label`; a line out of the log's `sequence`.
  public init(_ recording: Recording, label: String, from state: State) throws(RecordingError) {
    try Self.check(recording, label: label)
    var snapshots = [state.snapshot]
    for entry in recording.entries {
      guard entry.store == label && entry.outcome == .committed else {
        snapshots.append(snapshots[snapshots.count - 1])
        continue
      }
      guard let snapshot = try entry.state(as: State.Snapshot.self) else {
        throw RecordingError(
          line: entry.line, "the line has no \"state\": the log was not written with snapshots of \"\(label)\"")
      }
      snapshots.append(snapshot)
    }
    self.snapshots = snapshots
  }

  /// Checks that the log has actions of `label` (if it has any at all), in their `sequence`.
  private static func check(_ recording: Recording, label: String) throws(RecordingError) {
    let labels = Set(recording.entries.map(\.store))
    guard labels.isEmpty || labels.contains(label) else {
      let known = labels.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
      throw RecordingError(line: nil, "no action of the log is labelled \"\(label)\"; its labels are \(known)")
    }
    try recording.checkSequence()
  }

  /// How many actions the recording holds: ``goTo(_:in:isolation:)`` takes `0...count`.
  public var count: Int {
    snapshots.count - 1
  }

  /// The snapshot after the first `k` actions of the recording.
  ///
  /// - Parameter k: How many actions, from `0` to ``count``.
  /// - Returns: The snapshot.
  public func snapshot(after k: Int) -> State.Snapshot {
    guard snapshots.indices.contains(k) else {
      fatalError("TimeTravel: no point \(k) in a recording of \(count) actions (0...\(count))")
    }
    return snapshots[k]
  }

  /// Sets `store` to the state after the first `k` actions of the recording, by dispatching the
  /// restore action from the caller's isolation, and waits for its commit.
  ///
  /// - Parameters:
  ///   - k: How many actions, from `0` to ``count``.
  ///   - store: The store to set.
  ///   - isolation: Where the restore action is dispatched from: the caller's, by default, so
  ///     that a store on `.immediate` set from the main actor commits there.
  /// - Returns: Whether the store committed the restore (a middleware may cancel it).
  @discardableResult
  public func goTo(_ k: Int, in store: Store<State>, isolation: isolated (any Actor)? = #isolation) async -> Bool {
    await store.actions.dispatchAndWait(action: State.restore(snapshot(after: k)), isolation: isolation)
  }
}
