extension ActionLog {
  /// The optional fields an ``ActionLog`` writes on each line, beside `store`, `time`, `outcome`,
  /// `durationNanoseconds` and `action`: what a viewer of the log (an inspector) shows.
  ///
  /// A log writes none of them unless asked, so its lines stay as short as they were:
  ///
  /// ```swift
  /// let log = ActionLog(output: try .file(URL(fileURLWithPath: "session.jsonl")), fields: .all)
  /// // {"action":{"add":{"_0":2}},"dispatch":"3","durationNanoseconds":2125,"outcome":"committed",
  /// //  "sequence":7,"store":"counter","time":"2026-11-23T03:07:49.123Z"}
  /// ```
  ///
  /// The state after each commit is asked of each store's middleware instead, since it depends on
  /// the state type: ``ActionLog/middleware(label:for:snapshots:)``.
  ///
  /// Stores pay nothing for fields their log does not write: ``holds``, ``cancelledBy`` and
  /// ``dispatch`` make the store trace each action on its way through its middleware (the
  /// middleware that held it, the one that cancelled it, the global dispatch it came from), and
  /// only the stores given a middleware of such a log do.
  public struct Fields: OptionSet, Sendable {
    /// The bits of the set.
    public let rawValue: Int

    /// Creates a set from its bits.
    ///
    /// - Parameter rawValue: The bits.
    public init(rawValue: Int) {
      self.rawValue = rawValue
    }

    /// `"sequence"`: the line's number in the log, from 1, one more on each line, in the order
    /// the log writes them (error lines included). In one file it is the line's position; it
    /// shows a reader that follows a log as it grows, or that merges logs, that no line is
    /// missing.
    public static let sequence = Fields(rawValue: 1 << 0)

    /// `"holds"`: each middleware that held the action (had not decided when its `intercept`
    /// returned), in order, as `{"middleware": "<type name>", "nanoseconds": <from its intercept
    /// to its decision>}`. Absent when no middleware held the action.
    public static let holds = Fields(rawValue: 1 << 1)

    /// `"cancelledBy"`: on a cancelled line, the type name of the middleware that cancelled the
    /// action (by `cancel()`, or by letting its last `Proceed` go undecided).
    public static let cancelledBy = Fields(rawValue: 1 << 2)

    /// `"dispatch"`: on every line of one global dispatch (`Store<S>.actions`), the same string,
    /// and another for each global dispatch, so that a viewer shows the stores it reached as one
    /// event. Absent for a dispatch to one store (`store.actions`). Numbers of one process:
    /// unique within a log that one process writes.
    public static let dispatch = Fields(rawValue: 1 << 3)

    /// `"swift"`, `"stateType"` and `"stateForm"`: what a test generated from the log
    /// (``SessionTest``) needs to compile against the app's own types.
    ///
    /// - `"swift"`: the action as the Swift expression that makes it again,
    ///   `.rename(id: 3, title: "Milk")`, read through `Mirror` (enum cases with their labels in
    ///   order, structs through their memberwise initializer); or, when it cannot be written so,
    ///   `"swiftError"`, which says why (a class in it, a type declared in a function…).
    /// - `"stateType"`: the store's state type with its module, `todo.TodoListState`.
    /// - `"stateForm"`, on a line with a state: `"snapshot"` when the log took it as the state's
    ///   ``Snapshotting/snapshot`` (``StateSnapshots/snapshot``), which a test can take again;
    ///   `"encoding"` for a function of yours (``StateSnapshots/encoding(_:)``).
    ///
    /// ```swift
    /// let log = ActionLog(output: try .file(URL(fileURLWithPath: "session.jsonl")), fields: [.all, .swift])
    /// // {"action":{"add":{"title":"Milk"}},…,"stateType":"todo.TodoListState","swift":".add(title: \"Milk\")",…}
    /// ```
    ///
    /// It costs more than the others (a walk of the action through `Mirror`, a few microseconds
    /// per line), so ``all`` leaves it out: ask for it when you record sessions to turn into tests.
    public static let swift = Fields(rawValue: 1 << 4)

    /// Every optional field that a viewer shows: ``sequence``, ``holds``, ``cancelledBy`` and
    /// ``dispatch`` (not ``swift``, which is for tests).
    public static let all: Fields = [.sequence, .holds, .cancelledBy, .dispatch]

    /// The fields that need each action traced through its store's middleware.
    static let traced: Fields = [.holds, .cancelledBy, .dispatch]
  }
}
