import Dispatch
import FluxCore
import FluxDevtools

/// What `log-curve` and `mirror-curve` time: dispatches into a store logged by a fresh
/// `ActionLog` of every field, whose lines are counted, not kept.
enum LoggedBurst {
  /// Nanoseconds per action on the committing thread and end to end (the dispatches, then
  /// `flush()`: every line encoded and written), and bytes per line: the best of `rounds`, each
  /// with a store of its own from `makeStore`. With `paced`, each action is dispatched once the
  /// log has written every earlier line (`flush()`, not timed), and only the dispatches count.
  static func measure<Value: State>(
    rounds: Int, actions: Int, paced: Bool = false, label: String, snapshots: StateSnapshots<Value>,
    makeStore: () -> Value, mutations: Value.Mutations, action: (Int) -> Value.Action
  ) -> (committing: Double, endToEnd: Double, bytesPerLine: Int) where Value.Action: Encodable {
    var best = (committing: Double.infinity, endToEnd: Double.infinity, bytesPerLine: 0)
    for _ in 0..<rounds {
      let written = Tally()
      let log = ActionLog(
        output: ActionLogOutput { written.add($0.utf8.count) }, fields: .all, queueLimit: actions + 1)
      let store = Store<Value>(
        state: makeStore(), mutations: mutations, executor: .immediate,
        middlewares: [log.middleware(label: label, snapshots: snapshots)])
      var dispatching: UInt64 = 0
      let start = DispatchTime.now().uptimeNanoseconds
      if paced {
        for index in 0..<actions {
          // The drainer lets go of the lines it wrote before it wakes `flush()`: no snapshot
          // holds the state's buffers now.
          log.flush()
          let dispatched = DispatchTime.now().uptimeNanoseconds
          store.actions.dispatch(action: action(index))
          dispatching += DispatchTime.now().uptimeNanoseconds - dispatched
        }
      } else {
        for index in 0..<actions { store.actions.dispatch(action: action(index)) }
        dispatching = DispatchTime.now().uptimeNanoseconds - start
      }
      log.flush()
      let end = DispatchTime.now().uptimeNanoseconds
      best.committing = min(best.committing, Double(dispatching) / Double(actions))
      best.endToEnd = min(best.endToEnd, Double(end - start) / Double(actions))
      best.bytesPerLine = written.total / actions
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
