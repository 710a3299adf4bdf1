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
/// start of the commit to its end, with the middleware hooks around it; absent when cancelled)
/// and `action`, encoded by its `Encodable` conformance. ``Recording`` reads such a log back,
/// ``Replay`` dispatches it again.
///
/// > Important: Thread-safe: stores on any executors may share one log. Lines are written one
/// > at a time, whole, in the order their actions ended, on the executor of the store that
/// > ended one. An action that cannot be encoded is written as an `error` line instead.
public final class ActionLog: Sendable {
  private let output: ActionLogOutput
  // Taken around each write, so lines never interleave.
  private let lock = Lock()

  /// Creates a log that writes to `output`.
  ///
  /// - Parameter output: Where the lines go.
  public init(output: ActionLogOutput) {
    self.output = output
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
    AnyMiddleware(ActionLogMiddleware<State>(log: self, label: label))
  }

  func append<Action: Encodable>(label: String, outcome: ActionOutcome, duration: UInt64?, action: Action) {
    let time = LogTime.string(from: Date())
    let line = ActionLogLine(
      store: label, time: time, outcome: outcome, durationNanoseconds: duration, action: action)
    let text: String
    do {
      text = try line.encoded()
    } catch {
      let report = ["error": "the action \(Action.self) could not be encoded: \(error)", "store": label]
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      text = ((try? encoder.encode(report)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
    }
    lock.withLock { output.write(text) }
  }
}
