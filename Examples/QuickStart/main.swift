import FluxCore
import FluxReactive

// State: what a store holds. Only its mutations change it; only `Computed` publishes it.
final class CounterState: State {
  typealias Action = CounterAction
  typealias Mutations = CounterMutations

  fileprivate let count = Variable(0)
}

// Actions: what can happen, and functions that dispatch it. Equatable, so that tests can compare them.
enum CounterAction: Equatable, Sendable {
  case increment
  case add(Int)
}

extension Actions where State == CounterState {
  func increment() {
    dispatch(action: .increment)
  }

  func add(_ amount: Int) {
    dispatch(action: .add(amount))
  }
}

// Mutations: the one place where the state changes.
struct CounterMutations: Mutations {
  func commit(action: CounterAction, state: CounterState) {
    switch action {
    case .increment: state.count.value += 1
    case .add(let amount): state.count.value += amount
    }
  }
}

// Computed: what the rest of the program may read.
extension Computed where State == CounterState {
  var count: Constant<Int> {
    state.count.constant
  }

  var countText: Signal<String> {
    state.count.signal.map { "count: \($0)" }
  }
}

// A store, an observer, and a few actions.
let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
let observation = store.computed.countText.observe { print($0) }

store.actions.increment()
store.actions.add(10)
Store<CounterState>.actions.increment()  // every live store of CounterState

observation.dispose()
// prints "count: 0", "count: 1", "count: 11", "count: 12"
