// swift-format-ignore-file
// The test kit alone is enough for a test file: it re-exports FluxCore. No diagnostics expected.
import FluxTesting

final class TallyState: State {
  typealias Action = Int
  typealias Mutations = TallyMutations
}

struct TallyMutations: Mutations {
  func commit(action: Int, state: TallyState) {}
}

func tallies() async {
  let store = Store<TallyState>(state: .init(), mutations: .init(), executor: .immediate)
  let actions: Actions<TallyState> = store.actions
  actions.dispatch(action: 1)
  let tester = StoreTester<TallyState>(state: .init(), mutations: .init(), executor: Executor.immediate)
  await tester.dispatch(1)
  tester.finish()
}

// A tracker takes any object within its body, Sendable or not, in a synchronous or async body.
final class Draft {
  var text = ""
}

func tracksPlainObjects() async {
  withLeakTracking { leaks in
    let draft = leaks.track(Draft())
    draft.text = "kept here"
  }
  await withLeakTracking { leaks in
    let draft = leaks.track(Draft())
    await Task.yield()
    draft.text = "kept here"
  }
}
