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
/// > Important: Thread-safe: stores on any executors may share one log. Lines are written one
/// > at a time, whole, in the order their actions ended: on the executor of a store whose
/// > action ended, or on the log's own queue. The line of an action that ends while another
/// > thread writes is written by that thread or that queue, so `dispatch` may return before
/// > its line is out; a thread writes no line that ended after its own, and lines wait in
/// > memory while the output is slow. The log holds no lock while it calls the output, which
/// > may dispatch to a store that logs here too. An action that cannot be encoded is written as
/// > an `error` line instead.
///
/// Lines still on the log's queue are lost if the process exits first: call ``flush()`` before
/// it does, or ``finish()``. A file output appends each line at its path as it is written, so
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
  private let lock = Lock()
  // Guarded by `lock`.
  nonisolated(unsafe) private var turns = Turns()
  /// Writes the lines that are ready once the thread that wrote before them has written its own.
  private let writer = DispatchQueue(label: "FluxDevtools.ActionLog")
  /// The commits that commands of an inspector wait for, for the log of an ``InspectorConnection``:
  /// their lines say what they were (`"steered"`).
  let marks: SteeringMarks?

  /// Creates a log that writes to `output`.
  ///
  /// - Parameter output: Where the lines go.
  public init(output: ActionLogOutput) {
    self.output = output
    self.fields = []
    self.marks = nil
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
  public init(output: ActionLogOutput, fields: Fields) {
    self.output = output
    self.fields = fields
    self.marks = nil
  }

  /// Creates the log of an ``InspectorConnection``, whose lines of commits that a command of the
  /// inspector caused say so.
  init(output: ActionLogOutput, fields: Fields, marks: SteeringMarks) {
    self.output = output
    self.fields = fields
    self.marks = marks
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

  /// Writes the line of an action that just ended.
  ///
  /// The action takes its turn, and its time, at once; it is encoded (the user's `Encodable`
  /// code) outside the lock. Then whoever finds the line of the next turn ready and nobody
  /// writing writes the lines that are ready up to its own, in turn order, outside the lock too
  /// (``write(_:until:)``): the output may dispatch to a store that logs here, whose line is then
  /// written after the current one.
  ///
  /// `state`: the snapshot to write, for a committed line of a middleware made with snapshots;
  /// `trace`: the action's trace, if its store made one and this log reads it; `types`: the
  /// store's state type and how its snapshots are taken, for ``Fields/swift``; `steered`: the
  /// command of an inspector that caused the commit, if one did.
  func append<Action: Encodable>(
    label: String, outcome: ActionOutcome, duration: UInt64?, action: Action, state: (any Encodable)? = nil,
    trace: ActionTrace? = nil, types: (state: String, form: SnapshotForm?)? = nil, steered: String? = nil
  ) {
    let (turn, date) = lock.withLock { (turns.take(), Date()) }
    var line = ActionLogLine(
      store: label, time: LogTime.string(from: date), outcome: outcome, durationNanoseconds: duration,
      action: action)
    let sequence = fields.contains(.sequence) ? turn &+ 1 : nil
    line.sequence = sequence
    if let trace { line.trace(trace, fields: fields, outcome: outcome) }
    if let mirror = state as? MirrorState {
      line.stateMirror = mirror.value
    } else {
      line.state = state.map(EncodedState.init)
    }
    if fields.contains(.swift), let types { line.describeForSwift(state: types.state, form: types.form) }
    line.steered = steered
    let text: String
    do {
      text = try line.encoded()
    } catch {
      text =
        Self.withoutState(line, failure: error)
        ?? Self.errorLine(label: label, sequence: sequence, action: Action.self, error)
    }
    write(lock.withLock { turns.fill(turn, with: text) }, until: turn)
  }

  /// `line` without its state, and with `stateError` naming `failure`, if it had a state and is
  /// fine without it.
  private static func withoutState<Action>(_ line: ActionLogLine<Action>, failure: any Error) -> String? {
    guard line.state != nil || line.stateMirror != nil else { return nil }
    var line = line
    line.state = nil
    line.stateMirror = nil
    line.stateForm = nil
    line.stateError = "the state could not be encoded: \(encodingCause(failure))"
    return try? line.encoded()
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
  private static func errorLine<Action>(
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
  /// A line may still be on its way when the `dispatch` of its action returns (see above): its
  /// action ended while another thread was writing, and that thread, or the log's queue, writes
  /// it. Call `flush()` before the process exits, or before you read what the output wrote. It
  /// also waits for lines that are being encoded; it does not wait for actions still running.
  ///
  /// > Warning: Do not call it from the output, or from code the output waits for: the line
  /// > being written would wait for the call, and the call for the line.
  public func flush() {
    let waiter = lock.withLock { turns.waiter() }
    waiter?.wait()
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
  /// - Throws: The first write to the file that failed (the lines before it are in the file),
  ///   or why the lines may not all be on the disk.
  public func finish() throws(ActionLogOutput.FileError) {
    flush()
    try output.finish()
  }

  /// Writes `batch`, then what became ready meanwhile, until the line of `turn` is out (all of
  /// it if `turn` is `nil`); then hands what is ready to ``writer``. So a thread writes no line
  /// that ended after its own, and a store's executor is never kept writing the lines of
  /// busier stores.
  private func write(_ batch: Turns.Batch, until turn: UInt64?) {
    var batch = batch
    while !batch.lines.isEmpty {
      for text in batch.lines { output.write(text) }
      let isOwnLineOut = turn.map { batch.end > $0 } ?? true
      let waiters: [DispatchSemaphore]
      (batch, waiters) = lock.withLock { turns.written(through: isOwnLineOut ? nil : turn) }
      for waiter in waiters { waiter.signal() }
      if turn != nil, isOwnLineOut, !batch.lines.isEmpty {
        let rest = batch
        writer.async { self.write(rest, until: nil) }
        return
      }
    }
  }
}

/// The lines of an ``ActionLog`` between the end of their action and their write.
///
/// Every action takes the next turn when it ends; its line, once encoded, waits here until the
/// lines of all earlier turns are written. One thread at a time writes: the one that completes
/// the run of ready lines at the head while nobody writes takes them, writes them outside the
/// lock, and comes back for more until none is ready, or until its own line is out (then the
/// log's queue writes the rest). So lines go out whole, one at a time, in the order their
/// actions ended, and a thread never waits for another's write.
struct Turns {
  /// The turn the next action takes.
  private var next: UInt64 = 0
  /// The turn whose line is written next.
  private var head: UInt64 = 0
  /// The lines that are encoded and wait for an earlier one, or for the writer, by turn.
  private var lines: [UInt64: String] = [:]
  /// Whether a thread is writing the lines it took.
  private(set) var isWriting = false
  /// The lines of the turns before this one are written.
  private var writtenEnd: UInt64 = 0
  /// Who waits in ``ActionLog/flush()`` for the lines of the turns before `end`, in the order
  /// they came, so by `end`.
  private var waiters: [(end: UInt64, semaphore: DispatchSemaphore)] = []

  /// Takes the next turn.
  mutating func take() -> UInt64 {
    defer { next &+= 1 }
    return next
  }

  /// Lines to write, in order, and the turn after the last of them.
  struct Batch {
    var lines: [String]
    var end: UInt64
  }

  /// Enters the line of `turn`. Returns the lines the caller must write, in order, before it
  /// calls ``written(through:)``: none if an earlier line is missing or a thread is writing,
  /// and none after its own.
  mutating func fill(_ turn: UInt64, with line: String) -> Batch {
    guard turn >= head && turn < next && lines[turn] == nil else { fatalError("ActionLog: turn \(turn) entered twice") }
    lines[turn] = line
    if isWriting { return Batch(lines: [], end: head) }
    let ready = takeReady(through: turn)
    isWriting = !ready.lines.isEmpty
    return ready
  }

  /// The writer wrote what it took. Returns what became ready meanwhile, up to the line of
  /// `last` if given, to write next (when that is nothing, the writer is done), and the waiters
  /// to wake: those whose lines are now all written.
  mutating func written(through last: UInt64?) -> (Batch, [DispatchSemaphore]) {
    guard isWriting else { fatalError("ActionLog: written(through:) without a writer") }
    // Nobody takes lines while a writer writes: what it took ends at the head.
    writtenEnd = head
    let woken = waiters.prefix { $0.end <= writtenEnd }
    waiters.removeFirst(woken.count)
    let ready = takeReady(through: last)
    isWriting = !ready.lines.isEmpty
    return (ready, woken.map(\.semaphore))
  }

  /// What to wait on until the lines of every turn taken so far are written; `nil` if they are.
  mutating func waiter() -> DispatchSemaphore? {
    guard writtenEnd < next else { return nil }
    let semaphore = DispatchSemaphore(value: 0)
    waiters.append((next, semaphore))
    return semaphore
  }

  /// Removes the run of lines ready from the head, up to the line of `last` if given.
  private mutating func takeReady(through last: UInt64?) -> Batch {
    var ready: [String] = []
    while head <= last ?? .max, let line = lines.removeValue(forKey: head) {
      ready.append(line)
      head &+= 1
    }
    return Batch(lines: ready, end: head)
  }
}
