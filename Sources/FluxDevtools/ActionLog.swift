import FluxCore
import Foundation

/// A log of what stores committed and cancelled, written as JSON Lines: one JSON object per
/// line, per action, with the store's label, the time, the commit's duration and the action.
///
/// A store takes part when you give it the log's middleware; stores without it pay nothing:
///
/// ```swift
/// let log = ActionLog(output: try .file(URL(fileURLWithPath: "session.jsonl")))
/// let store = Store<CounterState>(
///   state: .init(), mutations: .init(), executor: .mainThread,
///   middlewares: [log.middleware(label: "counter")])
/// store.actions.add(2)
/// // {"action":{"add":{"_0":2}},"durationNanoseconds":2125,"outcome":"committed","store":"counter","time":"2026-11-23T03:07:49.123Z"}
/// ```
///
/// Each line holds `store` (the label), `time` (when the action ended: ISO 8601, UTC,
/// milliseconds), `outcome` (`committed` or `cancelled`), `durationNanoseconds` (from the
/// log middleware's `willCommit` to its `didCommit`: the commit, and the hooks of other
/// middleware that run between those two; absent when cancelled)
/// and `action`, encoded by its `Encodable` conformance (an infinite or not-a-number `Double` or
/// `Float` as the string `"Infinity"`, `"-Infinity"` or `"NaN"`, which JSON has no number for, and
/// ``Recording`` reads back as that number). ``Recording`` reads such a log back,
/// ``Replay`` dispatches it again.
///
/// > Important: Thread-safe: stores on any executors may share one log. The committing thread
/// > only queues what the line needs, as values (the action, the snapshot, the time, the label,
/// > the outcome): about a microsecond, whatever the state's size, with its caches warm (after
/// > a pause, the log's code may have to be fetched again: see the benchmarks). The
/// > log's own queue encodes the lines and writes them, one at a time, whole, in the order their
/// > actions ended, so `dispatch` returns before its line is out. When the queue runs out of
/// > lines it lingers, looking for more after naps of 0.5 to 16 ms, 31.5 ms in all: a line that
/// > comes then waits for the next look, without waking a thread. The first line after the
/// > linger wakes the queue's thread, which costs its committing thread several microseconds,
/// > tens after a pause; lingers that find nothing grow shorter, down to none, so that an app
/// > whose actions come seldom does not pay for them. At most `queueLimit` lines wait
/// > (``init(output:fields:queueLimit:)``); the lines of actions that end while that many wait
/// > are dropped, and one line says how many, and when, in their place. The log holds no lock
/// > while it calls the output, which may dispatch to a store that logs here too. An action
/// > that cannot be encoded is written as an `error` line instead.
///
/// Lines still on the log's queue are lost if the process exits first (or crashes: up to 16 ms of
/// lines when the log lingered): call ``flush()`` before it exits, or ``finish()``; a log that is
/// let go waits for its lines. A file output appends each line at its path as it is written, so
/// after ``flush()`` a reader finds every line there, and a process that ends without
/// ``finish()`` (or crashes) leaves them there too; ``finish()`` writes the file to the disk,
/// closes it, and reports a write that failed.
///
/// A log writes more for a viewer when asked: the line's number, the middleware that held or
/// cancelled the action, the global dispatch it came from (``Fields``), and the state after each
/// commit (``middleware(label:for:snapshots:)``).
public final class ActionLog: Sendable {
  private let output: ActionLogOutput
  /// The optional fields this log writes.
  public let fields: Fields
  /// Encodes and writes the lines on a queue of its own.
  private let writer: LineWriter
  /// The ring of a flight recorder (``init(output:fields:flightRecorder:)``); `nil` for a log
  /// that writes every line.
  private let recorder: FlightRecorder?
  /// The commits that commands of an inspector wait for, for the log of an ``InspectorConnection``:
  /// their lines say what they were (`"steered"`).
  let marks: SteeringMarks?

  /// How many lines a log keeps waiting for its queue, unless told otherwise: 100,000.
  public static let defaultQueueLimit = 100_000

  /// Creates a log that writes to `output`.
  ///
  /// - Parameter output: Where the lines go.
  public convenience init(output: ActionLogOutput) {
    self.init(output: output, fields: [], queueLimit: Self.defaultQueueLimit)
  }

  /// Creates a log that writes to `output`, with the optional `fields` on each line.
  ///
  /// ```swift
  /// let log = ActionLog(output: try .file(URL(fileURLWithPath: "session.jsonl")), fields: .all)
  /// ```
  ///
  /// - Parameters:
  ///   - output: Where the lines go.
  ///   - fields: The optional fields to write; see ``Fields``.
  public convenience init(output: ActionLogOutput, fields: Fields) {
    self.init(output: output, fields: fields, queueLimit: Self.defaultQueueLimit)
  }

  /// Creates a log that writes to `output`, with the optional `fields` on each line, and at most
  /// `queueLimit` lines waiting to be encoded and written.
  ///
  /// Lines wait in memory, each with its action and its snapshot, while the log's queue encodes
  /// and writes the lines before them. When `queueLimit` lines wait, the lines of the actions
  /// that end meanwhile are dropped, and one line stands in their place, written once the queue
  /// has room: `{"dropped":12,"error":"12 lines were dropped here: …","firstDroppedTime":…,
  /// "lastDroppedTime":…,"sequence":…,"stores":[…]}` (see the log format article). So memory
  /// stays bounded, by about twice `queueLimit` lines (those waiting, and those being written).
  ///
  /// ```swift
  /// let log = ActionLog(output: try .file(URL(fileURLWithPath: "session.jsonl")), fields: .all, queueLimit: 100_000)
  /// ```
  ///
  /// - Parameters:
  ///   - output: Where the lines go.
  ///   - fields: The optional fields to write; see ``Fields``.
  ///   - queueLimit: The most lines that wait (at least 1; a smaller number counts as 1).
  public init(output: ActionLogOutput, fields: Fields, queueLimit: Int) {
    self.output = output
    self.fields = fields
    self.marks = nil
    self.writer = LineWriter(output: output, numbersLines: fields.contains(.sequence), limit: queueLimit)
    self.recorder = nil
  }

  /// Creates a flight recorder: a log that keeps the lines of the last `capacity` actions in
  /// memory, as values, and encodes and writes them only when asked (``writeFlightRecord()``),
  /// when it is finished or let go, and when the process exits.
  ///
  /// Keeping a line costs what queueing one costs a log that writes every line (a lock, the
  /// values the line needs); nothing is encoded until the lines are written, and the memory held
  /// is that of the lines kept, with their actions and snapshots: at most `capacity` lines (the
  /// room for them grows as they come, so a large capacity costs nothing until it is used).
  ///
  /// ```swift
  /// let log = ActionLog(output: try .file(URL(fileURLWithPath: "flight.jsonl")), fields: .all, flightRecorder: 500)
  /// // … the app runs; on a bug report:
  /// log.writeFlightRecord()  // the last 500 actions, with their states, are in flight.jsonl
  /// ```
  ///
  /// What is in the file, by how the process ends:
  /// - ``writeFlightRecord()``, ``finish()``, the log let go, a normal exit (`exit`, the end of
  ///   `main`: an `atexit` handler; not the exit of a child process forked from this one, which
  ///   writes nothing): the lines held, oldest first, each encoded as a log that writes every
  ///   line writes it; then the ring starts again, empty.
  /// - A crash: SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS or SIGFPE (a Swift runtime error, a
  ///   failed `precondition`, `abort()`, a bad access). A signal handler cannot encode (encoding
  ///   allocates and takes locks, which a handler must not), so the actions held are lost. The
  ///   file keeps every line written before (by an earlier ``writeFlightRecord()``), and gets
  ///   one more, appended with `write(2)` from a buffer the handler owns:
  ///   `{"error":"the process stopped on signal 4: the flight recorder held 37 actions, not
  ///   written","flightRecorderLost":37,"signal":4}`. One line per recorder, once per
  ///   process, whole: the first thread that crashes writes the lines, and a thread that crashes
  ///   meanwhile waits for it (up to about two seconds); the number is the count at one moment,
  ///   read once, however many threads commit meanwhile; a write that fails is cut off again.
  ///   Then the handler found before (the Swift runtime's backtracer, or the default) gets the
  ///   signal. No line for an output that is not a file, for a recorder past the 32nd with a
  ///   file at once, or when the handler cannot run: a stack overflow on a thread without an
  ///   alternate signal stack, or a handler for those signals installed after the recorder,
  ///   which replaces it.
  /// - SIGTERM, SIGINT, SIGHUP (`kill`, Control-C, a terminal that closes), and any other signal
  ///   that ends the process: only what was written before; the app that wants its record
  ///   handles the signal off a signal handler, on a queue (a handler may not encode either),
  ///   finishes the log, then lets the signal end the process:
  ///
  ///   ```swift
  ///   // First thing in `main`, before other threads start: they inherit the mask, and SIGTERM
  ///   // waits for the source instead of ending the process at once.
  ///   var terminate = sigset_t()
  ///   sigemptyset(&terminate)
  ///   sigaddset(&terminate, SIGTERM)
  ///   pthread_sigmask(SIG_BLOCK, &terminate, nil)
  ///   let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
  ///   source.setEventHandler {
  ///     try? log.finish()  // the last 500 actions are in flight.jsonl, on the disk
  ///     // Then end as SIGTERM would have.
  ///     signal(SIGTERM, SIG_DFL)
  ///     var terminate = sigset_t()
  ///     sigemptyset(&terminate)
  ///     sigaddset(&terminate, SIGTERM)
  ///     pthread_sigmask(SIG_UNBLOCK, &terminate, nil)
  ///     raise(SIGTERM)
  ///   }
  ///   source.resume()  // keep `source` while the app runs
  ///   ```
  ///
  ///   (`todo --flight-recorder N` does so for SIGINT, SIGTERM and SIGHUP.)
  /// - SIGKILL (`kill -9`), `_exit`, a power cut: only what was written before, no crash line.
  ///   Each line is appended whole by `write(2)`, so the lines before are whole; a kill in the
  ///   middle of a write may leave the start of that one line, which
  ///   ``Recording/init(contentsOf:allowingCutShortLastLine:)`` reads past. After a power cut,
  ///   only what ``finish()`` wrote to the disk is sure to be there.
  ///
  /// So call ``writeFlightRecord()`` where a bug is seen (a failed check of the app's, a
  /// report button) to keep the actions that led to it.
  ///
  /// - Parameters:
  ///   - output: Where the lines go when they are written.
  ///   - fields: The optional fields to write; see ``Fields``.
  ///   - capacity: How many actions to keep (1 to 10,000,000; a number outside is brought inside).
  public init(output: ActionLogOutput, fields: Fields, flightRecorder capacity: Int) {
    let capacity = max(1, min(capacity, 10_000_000))
    self.output = output
    self.fields = fields
    self.marks = nil
    // No linger: a recorder's lines come with the flush that writes them.
    self.writer = LineWriter(
      output: output, numbersLines: fields.contains(.sequence), limit: max(capacity, Self.defaultQueueLimit),
      lingers: false)
    self.recorder = FlightRecorder(capacity: capacity, path: output.filePath)
    FlightRecorders.add(self)
  }

  /// Whether this log is a flight recorder, which writes its lines only when asked
  /// (``init(output:fields:flightRecorder:)``).
  public var isFlightRecorder: Bool {
    recorder != nil
  }

  /// Writes the lines a flight recorder holds, oldest first, and returns once they are written;
  /// the recorder then starts again, empty. For a log that is not a flight recorder, the same as
  /// ``flush()``.
  ///
  /// In a child process forked from the one that made the log, it returns at once and writes
  /// nothing (as the exit of such a child does): the lines held there, and the file, are the
  /// parent's, and the log's queue runs only in the parent.
  public func writeFlightRecord() {
    guard writer.isInItsProcess else { return }
    if let recorder {
      recorder.lock.withLock {
        for entry in recorder.takeLocked() { writer.offer(entry.line, at: entry.date) }
      }
    }
    flush()
  }

  /// Creates the log of an ``InspectorConnection``, whose lines of commits that a command of the
  /// inspector caused say so.
  init(output: ActionLogOutput, fields: Fields, marks: SteeringMarks) {
    self.output = output
    self.fields = fields
    self.marks = marks
    self.writer = LineWriter(
      output: output, numbersLines: fields.contains(.sequence), limit: Self.defaultQueueLimit)
    self.recorder = nil
  }

  /// A middleware that writes the actions of one store to this log, under `label`.
  ///
  /// Give each store a middleware of its own: the commit's duration is measured per middleware.
  ///
  /// - Parameters:
  ///   - label: The name of the store in the log; ``Replay`` finds the store again by it.
  ///   - state: The state type of the store; usually inferred.
  /// - Returns: A middleware for the store's list.
  public func middleware<State: FluxCore.State>(label: String, for state: State.Type = State.self)
    -> AnyMiddleware<State> where State.Action: Encodable
  {
    wrap(ActionLogMiddleware<State>(log: self, label: label, snapshots: nil))
  }

  /// A middleware that writes the actions of one store to this log, under `label`, with the
  /// state after each commit as the `state` field of its committed lines.
  ///
  /// ```swift
  /// let store = Store<CounterState>(
  ///   state: .init(), mutations: .init(), executor: .mainThread,
  ///   middlewares: [log.middleware(label: "counter", snapshots: .snapshot)])
  /// store.actions.add(2)
  /// // {"action":{"add":{"_0":2}},"durationNanoseconds":2125,"outcome":"committed","state":2,…}
  /// ```
  ///
  /// - Parameters:
  ///   - label: The name of the store in the log; ``Replay`` finds the store again by it.
  ///   - state: The state type of the store; usually inferred.
  ///   - snapshots: How to write the state: ``StateSnapshots/snapshot`` for a state that is
  ///     ``Snapshotting``, or ``StateSnapshots/encoding(_:)`` with a function of yours.
  /// - Returns: A middleware for the store's list.
  public func middleware<State: FluxCore.State>(
    label: String, for state: State.Type = State.self, snapshots: StateSnapshots<State>
  ) -> AnyMiddleware<State> where State.Action: Encodable {
    wrap(ActionLogMiddleware<State>(log: self, label: label, snapshots: snapshots))
  }

  /// The middleware for a store's list: one that its store traces actions for if this log writes
  /// a field that needs it.
  private func wrap<State: FluxCore.State>(_ middleware: ActionLogMiddleware<State>) -> AnyMiddleware<State> {
    let wrapped = AnyMiddleware(middleware)
    return fields.isDisjoint(with: .traced) ? wrapped : wrapped.tracingActions()
  }

  /// Whether this log writes a field read from an action's trace.
  var readsTraces: Bool {
    !fields.isDisjoint(with: .traced)
  }

  /// Queues the line of an action that just ended, for the log's queue to encode and write.
  ///
  /// On the committing thread, only what the line needs, as values (``PendingActionLine``), the
  /// time, and a lock to join the queue: the action and the snapshot are `Sendable`, the
  /// trace's fields are copied out. The first line of an idle queue starts its drainer.
  ///
  /// `state`: the snapshot to write, for a committed line of a middleware made with snapshots;
  /// `trace`: the action's trace, if its store made one and this log reads it; `types`: the
  /// store's state type and how its snapshots are taken, for ``Fields/swift``; `steered`: the
  /// command of an inspector that caused the commit, if one did.
  func append<Action: Encodable & Sendable>(
    label: String, outcome: ActionOutcome, duration: UInt64?, action: Action,
    state: (any Encodable & Sendable)? = nil, trace: ActionTrace? = nil,
    types: (state: String, form: SnapshotForm?)? = nil, steered: String? = nil
  ) {
    let line = PendingActionLine(
      label: label, outcome: outcome, duration: duration, action: action, state: state,
      trace: trace.map(TraceFields.init), types: types, steered: steered, fields: fields)
    if let recorder {
      let replaced = recorder.keep(line)
      // The line let go is released here, after the recorder's lock (rule 16).
      withExtendedLifetime(replaced) {}
    } else {
      writer.offer(line)
    }
  }

  /// Waits for the lines this log queued: a log let go without ``finish()`` still writes them.
  /// Not on the log's own queue (its output let go of the last reference), where it would wait
  /// for itself.
  deinit {
    if let recorder {
      // In a forked child the lines held are the parent's (``writeFlightRecord()``).
      if writer.isInItsProcess {
        recorder.lock.withLock {
          for entry in recorder.takeLocked() { writer.offer(entry.line, at: entry.date) }
        }
      }
      recorder.release()
    }
    if !writer.isOnWriter {
      writer.flush()
      writer.settle()
    }
  }

  /// `line` without its state, and with `stateError` naming `failure`, if it had a state and is
  /// fine without it.
  static func withoutState<Action>(
    _ line: ActionLogLine<Action>, failure: any Error, encoder: JSONEncoder
  ) -> String? {
    guard line.state != nil || line.stateMirror != nil else { return nil }
    var line = line
    line.state = nil
    line.stateMirror = nil
    line.stateForm = nil
    line.stateError = "the state could not be encoded: \(encodingCause(failure))"
    return try? line.encoded(with: encoder)
  }

  /// Why a value could not be encoded, in words: an `EncodingError`'s cause and where in the
  /// value it was, never a dump of the value (which holds the whole line, state and all).
  static func encodingCause(_ error: any Error) -> String {
    guard let error = error as? EncodingError else { return "\(error)" }
    switch error {
    case .invalidValue(_, let context):
      var cause = context.debugDescription.isEmpty ? "a value cannot be written as JSON" : context.debugDescription
      if let underlying = context.underlyingError { cause += " (\(encodingCause(underlying)))" }
      let path = context.codingPath
      guard !path.isEmpty else { return cause }
      guard path.count <= 16 else { return "\(cause) (at a depth of \(path.count))" }
      return "\(cause) (at \(path.map(\.stringValue).joined(separator: ".")))"
    @unknown default:
      return "a value cannot be written as JSON"
    }
  }

  /// The line that stands for an action that could not be encoded.
  static func errorLine<Action>(
    label: String, sequence: UInt64?, action: Action.Type, _ error: any Error
  ) -> String {
    let report = ErrorLine(
      error: "the action \(Action.self) could not be encoded: \(encodingCause(error))", store: label,
      sequence: sequence)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return ((try? encoder.encode(report)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
  }

  /// Returns once the line of every action that ended before the call is written to the output.
  ///
  /// A line is on its way when the `dispatch` of its action returns: the log's queue encodes and
  /// writes it. Call `flush()` before the process exits, or before you read what the output
  /// wrote. It also waits for the line that says lines were dropped, if they were; it does not
  /// wait for actions still running.
  ///
  /// In a child process forked from the one that made the log, it returns at once: the log's
  /// queue runs only in the parent.
  ///
  /// > Warning: Do not call it from the output, or from code the output waits for: the line
  /// > being written would wait for the call, and the call for the line. Called from the
  /// > output itself (or through ``finish()`` or ``writeFlightRecord()``), it stops the process
  /// > with a message that says so.
  public func flush() {
    writer.flush()
  }

  /// Flushes the log, then finishes its output: a file output
  /// (``ActionLogOutput/file(_:onFailure:)``) is written to the disk and closed, which lets
  /// another log open its path.
  ///
  /// Call it once the stores that log here are done; lines of actions that end after it are
  /// not written to a file output, which reports them as a failure
  /// (``ActionLogOutput/failure``). Every call has the first one's outcome, and calls from
  /// several threads at once all return once the file is closed
  /// (``ActionLogOutput/finish()``).
  ///
  /// Like ``flush()``, it must not be called from the output.
  ///
  /// - Throws: The first write to the file that failed (the lines before it are in the file),
  ///   or why the lines may not all be on the disk.
  public func finish() throws(ActionLogOutput.FileError) {
    writeFlightRecord()
    recorder?.release()
    try output.finish()
  }
}
