import FluxCore
import FluxDevtools

/// W13 and W14: what an `ActionLog` costs per action, written to memory, without and with the
/// state after each commit; and their yardstick, the same store with no log.
enum LogWorkloads {
  /// The logged store: W13 without snapshots, W14 with `snapshots: .snapshot`, every optional
  /// field on in both (sequence, holds, cancelledBy, dispatch).
  static func prepare(_ workload: Workload, tally: Tally) -> Prepared {
    let written = Tally()  // bytes of the lines, so that no line goes unused
    // Room for every line of the run: the table measures the committing thread, whose lines the
    // log's queue encodes on another, and drops none of them.
    let log = ActionLog(
      output: ActionLogOutput { written.add($0.utf8.count) }, fields: .all, queueLimit: Int.max)
    let middleware =
      workload == .w14
      ? log.middleware(label: "list", for: ListState.self, snapshots: .snapshot)
      : log.middleware(label: "list", for: ListState.self)
    return store(tally: tally, middlewares: [middleware], finish: { log.flush() })
  }

  /// The yardstick: the same store, unlogged.
  static func unlogged(tally: Tally) -> Prepared {
    store(tally: tally, middlewares: [], finish: {})
  }

  private static func store(
    tally: Tally, middlewares: [AnyMiddleware<ListState>], finish: @escaping () -> Void
  ) -> Prepared {
    let state = ListState(tally: tally)
    let store = Store<ListState>(
      state: state, mutations: ListMutations(), executor: .immediate, middlewares: middlewares)
    return Prepared(
      run: { range in
        for value in range { store.actions.dispatch(action: .add(value)) }
      },
      expected: { range in withExtendedLifetime(store) { sum(range) } },
      finish: {
        finish()
        return 0
      }
    )
  }
}

/// A small app's state: a count and ten short titles, encoded as its snapshot.
private final class ListState: State, Snapshotting, @unchecked Sendable {
  // `@unchecked Sendable`: `count` is only touched by the store's commits and hooks, one at a
  // time, on the one thread that dispatches to the store (`.immediate`).
  typealias Action = ListAction
  typealias Mutations = ListMutations

  struct Snapshot: Codable, Sendable {
    var count: Int
    var titles: [String]
  }

  let tally: Tally
  var count = 0
  let titles = (1...10).map { "Item number \($0)" }

  init(tally: Tally) {
    self.tally = tally
  }

  var snapshot: Snapshot { Snapshot(count: count, titles: titles) }

  static func restore(_ snapshot: Snapshot) -> ListAction { .add(snapshot.count) }
}

private enum ListAction: Codable, Sendable {
  case add(Int)
}

private struct ListMutations: Mutations {
  func commit(action: ListAction, state: ListState) {
    switch action {
    case .add(let value):
      state.count &+= value
      state.tally.add(value)
    }
  }
}
