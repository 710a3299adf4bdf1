import Dispatch
import FluxCore
import FluxDevtools
import Foundation

/// What `log-curve` and `mirror-curve` time: dispatches into a store logged by a fresh
/// `ActionLog` of every field, whose lines are counted, not kept.
enum LoggedBurst {
  /// Nanoseconds per action on the committing thread and end to end (the dispatches, then
  /// `flush()`: every line encoded and written), and bytes per line: the best of `rounds`, each
  /// with a store of its own from `makeStore`. With `pause`, each action is dispatched once the
  /// log has written every earlier line (seen at its output, without `flush()`, which would
  /// start the drainer itself), and then `pause` seconds later, and only the dispatches count:
  /// a pause of a millisecond finds the log's drainer lingering, one past its linger (31.5 ms at
  /// most) finds it idle. Paced, `median` is the median of the actions' times (the best of the
  /// rounds'): a dispatch that another process preempts adds milliseconds to the mean. Without
  /// `logged`, the store has no log (and nothing to wait for): the same dispatches, for
  /// comparison.
  static func measure<Value: State>(
    rounds: Int, actions: Int, pause: Double? = nil, logged: Bool = true, label: String,
    snapshots: StateSnapshots<Value>,
    makeStore: () -> Value, mutations: Value.Mutations, action: (Int) -> Value.Action
  ) -> (committing: Double, median: Double, endToEnd: Double, bytesPerLine: Int) where Value.Action: Encodable {
    var best = (committing: Double.infinity, median: Double.infinity, endToEnd: Double.infinity, bytesPerLine: 0)
    for _ in 0..<rounds {
      let written = Tally()
      let lines = LineCount()
      let log = ActionLog(
        output: ActionLogOutput {
          written.add($0.utf8.count)
          lines.add()
        }, fields: .all, queueLimit: actions + 1)
      let store = Store<Value>(
        state: makeStore(), mutations: mutations, executor: .immediate,
        middlewares: logged ? [log.middleware(label: label, snapshots: snapshots)] : [])
      var dispatching: UInt64 = 0
      var each: [UInt64] = []
      let start = DispatchTime.now().uptimeNanoseconds
      if let pause {
        for index in 0..<actions {
          // The drainer lets go of a batch's lines right after it writes them: no snapshot
          // holds the state's buffers by the end of the pause.
          if logged { lines.wait(for: index) }
          Thread.sleep(forTimeInterval: pause)
          let dispatched = DispatchTime.now().uptimeNanoseconds
          store.actions.dispatch(action: action(index))
          let took = DispatchTime.now().uptimeNanoseconds - dispatched
          dispatching += took
          each.append(took)
        }
      } else {
        for index in 0..<actions { store.actions.dispatch(action: action(index)) }
        dispatching = DispatchTime.now().uptimeNanoseconds - start
      }
      log.flush()
      let end = DispatchTime.now().uptimeNanoseconds
      best.committing = min(best.committing, Double(dispatching) / Double(actions))
      if !each.isEmpty { best.median = min(best.median, Double(each.sorted()[each.count / 2])) }
      best.endToEnd = min(best.endToEnd, Double(end - start) / Double(actions))
      best.bytesPerLine = written.total / actions
      withExtendedLifetime(log) {}
      written.free()
      withExtendedLifetime(store) {}
    }
    return best
  }

  /// A figure in nanoseconds: whole from 100, else with one decimal.
  static func format(_ value: Double) -> String {
    value >= 100 ? String(Int(value.rounded())) : String(Double(Int(value * 10)) / 10)
  }
}

/// The lines an output was given, counted on the log's queue and read on another thread.
final class LineCount: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var count = 0

  func add() { lock.withLock { count += 1 } }

  /// Returns once `lines` lines are counted, looking every 20 µs.
  func wait(for lines: Int) {
    while lock.withLock({ count }) < lines { usleep(20) }
  }
}
