import FluxCore
import FluxReactive

// The counter of VueFlux's README, with its generic arguments written out
// (`Store<CounterState>`, `Signal<String>`, `Binder<Bool>`).

final class CounterState: State {
  typealias Action = CounterAction
  typealias Mutations = CounterMutations

  fileprivate let count = Variable(0)
}

enum CounterAction {
  case increment, decrement
}

extension Actions where State == CounterState {
  func increment() {
    dispatch(action: .increment)
  }

  func decrement() {
    dispatch(action: .decrement)
  }
}

struct CounterMutations: Mutations {
  func commit(action: CounterAction, state: CounterState) {
    switch action {
    case .increment:
      state.count.value += 1

    case .decrement:
      state.count.value -= 1
    }
  }
}

extension Computed where State == CounterState {
  var countTextValues: Signal<String> {
    state.count.signal.map { String($0) }
  }

  var isCountNonNegative: Signal<Bool> {
    state.count.signal.map { $0 >= 0 }
  }
}

extension Computed where State == CounterState {
  var count: Constant<Int> {
    state.count.constant
  }
}

/// The README's shared store: one counter for the whole program, committing on a global queue.
///
/// Swift 6 asks a subclass of an `@unchecked Sendable` class to restate the conformance.
final class CounterStore: Store<CounterState>, @unchecked Sendable {
  static let shared = CounterStore()

  private init() {
    super.init(state: .init(), mutations: .init(), executor: .queue(.global()))
  }
}
