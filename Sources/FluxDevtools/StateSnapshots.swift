import FluxCore

/// How an ``ActionLog`` writes the state after each commit of a store: the `state` field of its
/// committed lines.
///
/// Through the state's ``Snapshotting/snapshot``, or through a function you give:
///
/// ```swift
/// let log = ActionLog(output: try .file(URL(fileURLWithPath: "session.jsonl")))
/// let counter = Store<CounterState>(
///   state: .init(), mutations: .init(), executor: .mainThread,
///   middlewares: [log.middleware(label: "counter", snapshots: .snapshot)])
/// let todos = Store<TodoState>(
///   state: .init(), mutations: .init(), executor: .mainThread,
///   middlewares: [log.middleware(label: "todos", snapshots: .encoding { $0.items.value })])
/// ```
///
/// The snapshot is taken in the log middleware's `didCommit`, on the store's executor, right
/// after the commit (and the `didCommit` hooks of the middleware before it), and encoded later,
/// with the line, on the log's queue: the committing thread pays for taking it (a copy-on-write
/// value costs a reference count), not for encoding it. So make a snapshot a value: a snapshot
/// that holds a reference to something the app changes later is encoded as it is then.
/// A state that cannot be encoded leaves the line without `state`, and with `stateError`, which
/// says why. The key tells whether a line has a state; its value is the snapshot, whatever it is:
/// a snapshot of an optional type that is `nil` is written `"state":null`, and
/// ``Recording/Entry/state(as:)`` reads it back as `.some(nil)`, not as a line without state.
public struct StateSnapshots<State: FluxCore.State>: Sendable {
  /// Takes the snapshot of a state, to be encoded at once.
  let take: @Sendable (State) -> any Encodable & Sendable
  /// How the snapshot is taken, for the `"stateForm"` of ``ActionLog/Fields/swift``.
  let form: SnapshotForm

  private init(form: SnapshotForm, take: @escaping @Sendable (State) -> any Encodable & Sendable) {
    self.form = form
    self.take = take
  }

  /// Writes what `snapshot` returns for the state, encoded by its `Encodable` conformance.
  ///
  /// - Parameter snapshot: Reads the state, on the store's executor, right after a commit.
  /// - Returns: The way of writing states.
  public static func encoding<Snapshot: Encodable & Sendable>(_ snapshot: @escaping @Sendable (State) -> Snapshot)
    -> Self
  {
    Self(form: .encoding, take: { snapshot($0) })
  }
}

extension StateSnapshots where State: Snapshotting {
  /// Writes the state's ``Snapshotting/snapshot``: what ``TimeTravel`` restores, so that it can
  /// read the states back from the log (``TimeTravel/init(_:label:from:)``).
  public static var snapshot: Self {
    Self(form: .snapshot, take: { $0.snapshot })
  }
}
