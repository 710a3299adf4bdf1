import Foundation

extension Recording.Entry {
  /// A middleware that held an action: it had not decided when its `intercept` returned.
  public struct Hold: Sendable, Equatable {
    /// The middleware's type name, as the log wrote it.
    public let middleware: String
    /// From the call of its `intercept` to its decision.
    public let nanoseconds: UInt64

    /// Creates a hold, as a line holds it.
    ///
    /// - Parameters:
    ///   - middleware: The middleware's type name.
    ///   - nanoseconds: How long it held the action.
    public init(middleware: String, nanoseconds: UInt64) {
      self.middleware = middleware
      self.nanoseconds = nanoseconds
    }
  }

  /// Decodes the state after the commit, as the log wrote it (``ActionLog/middleware(label:for:snapshots:)``).
  ///
  /// ```swift
  /// let counts = try recording.entries.compactMap { try $0.state(as: Int.self) }
  /// ```
  ///
  /// Where the type reads a `Double` or a `Float`, the strings `"Infinity"`, `"-Infinity"` and
  /// `"NaN"` read as those values, as ``ActionLog`` writes them.
  ///
  /// A line has a state when it has the key `state` (``hasState``), whatever its value: a
  /// snapshot of an optional type that is `nil` is written `"state":null`, and read back as
  /// `.some(nil)`, so it is told apart from a line with no state (`nil`):
  ///
  /// ```swift
  /// let selection = try entry.state(as: String?.self)  // String??
  /// // nil: no state on the line; .some(nil): the snapshot was nil; .some("a"): it was "a"
  /// ```
  ///
  /// For a type that is not optional, `"state":null` is not one of its values: a type error.
  /// (A doubly optional snapshot, `Int??`, writes both of its `nil`s as `null`, as JSON
  /// encoding does; both read back as the outer `nil`.)
  ///
  /// A state that the log wrote as `Mirror` showed it (``hasStateMirror``, ``StateSnapshots/mirror``)
  /// is not read as any type: it throws, and says so.
  ///
  /// - Parameter type: The type of the snapshots the log wrote; usually inferred.
  /// - Returns: The state, or `nil` when the line has none (``hasState``, ``hasStateMirror``).
  /// - Throws: A ``RecordingError`` naming the line when the state is not one of `type`, or was
  ///   written through `Mirror`.
  public func state<Snapshot: Decodable>(as type: Snapshot.Type = Snapshot.self) throws(RecordingError) -> Snapshot? {
    guard hasState else {
      guard hasStateMirror else { return nil }
      throw RecordingError(line: line, Self.mirrorRefusal(Snapshot.self))
    }
    do {
      let decoder = JSONDecoder()
      // As the log writes them: see ``ActionLogLine/encoded()``.
      decoder.nonConformingFloatDecodingStrategy = .convertFromString(
        positiveInfinity: NonFiniteNumbers.positiveInfinity, negativeInfinity: NonFiniteNumbers.negativeInfinity,
        nan: NonFiniteNumbers.nan)
      return try decoder.decode(ActionLogStateBody<Snapshot>.self, from: json).state
    } catch {
      throw RecordingError(line: line, "the state is not a \(Snapshot.self) (\(RecordingError.describe(error)))")
    }
  }
}

extension Recording.Entry {
  /// Why a state written through `Mirror` is not read back as a `Snapshot`.
  static func mirrorRefusal(_ snapshot: Any.Type) -> String {
    "the state is a Mirror snapshot (\"stateMirror\", of `snapshots: .mirror`), written to be looked at:"
      + " it is not read back as a \(snapshot), nor set back into a store; log the store with"
      + " `snapshots: .snapshot` (a Snapshotting state) or `.encoding` for states that can be"
  }
}

extension Recording {
  /// Checks that the lines that carry a `sequence` come in its order, as the log wrote them: a
  /// log whose lines were reordered (sorted by time, merged from pieces) would replay out of
  /// order.
  ///
  /// - Throws: A ``RecordingError`` naming the first line whose `sequence` does not follow the
  ///   one before.
  func checkSequence() throws(RecordingError) {
    var previous: (line: Int, sequence: UInt64)?
    for entry in entries {
      guard let sequence = entry.sequence else { continue }
      if let previous, sequence <= previous.sequence {
        throw RecordingError(
          line: entry.line,
          "\"sequence\" is \(sequence), after \(previous.sequence) on line \(previous.line): the lines are out of the order the log wrote them in"
        )
      }
      previous = (entry.line, sequence)
    }
  }
}
