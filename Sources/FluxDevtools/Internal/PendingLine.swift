import FluxCore
import Foundation

/// A line of an ``ActionLog`` between the end of its action and its encoding: what the line needs,
/// as values taken on the committing thread, encoded later on the log's queue.
///
/// Nothing here is encoded on the committing thread, and nothing needs to be: the action is
/// `Sendable` (every `State.Action` is), so is a snapshot (``StateSnapshots`` takes only
/// `Sendable` ones), and the trace's fields are copied out of the store's ``ActionTrace`` while
/// its hooks run. The state itself never leaves the committing thread: its snapshot is taken
/// there, right after the commit.
protocol PendingLine: Sendable {
  /// The store's label.
  var label: String { get }
  /// The line as JSON and a line break, of an action that ended at `date`, numbered `sequence`
  /// if the log numbers its lines.
  func encoded(date: Date, sequence: UInt64?, with encoder: JSONEncoder) -> String
}

/// The fields of an action's ``ActionTrace`` that a log writes, copied out while its hooks run.
struct TraceFields: Sendable {
  let holds: [ActionTrace.Hold]
  let cancelledBy: Any.Type?
  let dispatch: UInt64

  init(_ trace: ActionTrace) {
    holds = trace.holds
    cancelledBy = trace.cancelledBy
    dispatch = trace.dispatch
  }
}

/// The pending line of one action.
struct PendingActionLine<Action: Encodable & Sendable>: PendingLine {
  let label: String
  let outcome: ActionOutcome
  let duration: UInt64?
  let action: Action
  let state: (any Encodable & Sendable)?
  let trace: TraceFields?
  let types: (state: String, form: SnapshotForm?)?
  let steered: String?
  let fields: ActionLog.Fields

  func encoded(date: Date, sequence: UInt64?, with encoder: JSONEncoder) -> String {
    var line = ActionLogLine(
      store: label, time: LogTime.string(from: date), outcome: outcome, durationNanoseconds: duration,
      action: action)
    line.sequence = sequence
    if let trace { line.trace(trace, fields: fields, outcome: outcome) }
    if let mirror = state as? MirrorState {
      line.stateMirror = mirror.value
    } else {
      line.state = state.map(EncodedState.init)
    }
    if fields.contains(.swift), let types { line.describeForSwift(state: types.state, form: types.form) }
    line.steered = steered
    do {
      return try line.encoded(with: encoder)
    } catch {
      return ActionLog.withoutState(line, failure: error, encoder: encoder)
        ?? ActionLog.errorLine(label: label, sequence: sequence, action: Action.self, error)
    }
  }
}

/// The line that says where, and how many, lines were dropped because the log's queue was full.
///
/// `{"dropped":12,"error":"12 lines were dropped here: …","firstDroppedTime":"…","lastDroppedTime":"…",
/// "sequence":8,"stores":["counter"]}`: an error line (so that ``Recording`` refuses to replay a log
/// with actions missing), in the place of the lines it stands for.
struct DroppedLines: Sendable {
  /// How many lines were dropped.
  var count: UInt64
  /// When the first and the last of them ended.
  var first: Date
  var last: Date
  /// The labels of their stores, each once, in the order they first came (at most 16).
  var stores: [String]
  /// The queue's limit, for the message.
  let limit: Int

  init(first line: any PendingLine, at date: Date, limit: Int) {
    count = 1
    first = date
    last = date
    stores = [line.label]
    self.limit = limit
  }

  /// Counts one more dropped line, of an action that ended at `date`.
  mutating func add(_ line: any PendingLine, at date: Date) {
    count &+= 1
    last = date
    if stores.count < 16, !stores.contains(line.label) { stores.append(line.label) }
  }

  private struct Body: Encodable {
    let dropped: UInt64
    let error: String
    let firstDroppedTime: String
    let lastDroppedTime: String
    let sequence: UInt64?
    let stores: [String]
  }

  func encoded(sequence: UInt64?, with encoder: JSONEncoder) -> String {
    let body = Body(
      dropped: count,
      error:
        "\(count) \(count == 1 ? "line was" : "lines were") dropped here: the log's queue held \(limit) lines "
        + "waiting to be written",
      firstDroppedTime: LogTime.string(from: first), lastDroppedTime: LogTime.string(from: last),
      sequence: sequence, stores: stores)
    return ((try? encoder.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
  }
}
