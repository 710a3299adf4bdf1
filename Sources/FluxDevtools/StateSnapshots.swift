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

extension StateSnapshots {
  /// Writes the state as `Mirror` shows it, for a state that is not `Encodable`: read-only, to
  /// see it (in the Inspector, say), never to set a store back to it.
  ///
  /// ```swift
  /// let store = Store<PlayerState>(
  ///   state: .init(), mutations: .init(), executor: .mainThread,
  ///   middlewares: [log.middleware(label: "player", snapshots: .mirror)])
  /// // {"action":…,"stateMirror":{"fields":{"volume":{"fields":{"level":3},"kind":"class",…}},"kind":"class",…}}
  /// ```
  ///
  /// The line writes it as `"stateMirror"`, never as `"state"`: a reader of states
  /// (``Recording/Entry/state(as:)``, ``TimeTravel``, ``SessionTest``) refuses it and says why,
  /// and one that knows only `"state"` finds no state on the line. Its JSON form, and where it
  /// stops (cycles and shared objects are written once and referred to by number; values nest at
  /// most 32 deep; a collection shows its first 100 elements and its count; a snapshot writes at
  /// most 10,000 values and a text at most 1,000 bytes, each cut marked with `…`), are in
  /// <doc:RecordingAndReplaying#Snapshots-of-any-state>.
  ///
  /// > Important: `Mirror` reads the state's stored properties on the store's executor, right
  /// > after the commit, where the mutations write them: a property that another thread writes
  /// > without a lock is a data race there as it is anywhere. A `Variable` or `Constant` of
  /// > FluxReactive shows its `value`, read under its lock. A type that is `CustomReflectable`
  /// > shows its `customMirror`, and a value that `Mirror` shows nothing inside (a function, a
  /// > type) its description: that code of yours runs there too.
  public static var mirror: Self {
    Self(form: .mirror, take: { MirrorState(value: MirrorSnapshot.take($0)) })
  }
}

extension StateSnapshots where State: Snapshotting {
  /// Writes the state's ``Snapshotting/snapshot``: what ``TimeTravel`` restores, so that it can
  /// read the states back from the log (``TimeTravel/init(_:label:from:)``).
  public static var snapshot: Self {
    Self(form: .snapshot, take: { $0.snapshot })
  }
}
