// The counter that DocC articles use without declaring it (the Getting Started article shows it).

final class CounterState: State {
  typealias Action = CounterAction
  typealias Mutations = CounterMutations

  fileprivate let count = Variable(0)
}

enum CounterAction: Sendable {
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

struct CounterMutations: Mutations {
  func commit(action: CounterAction, state: CounterState) {
    switch action {
    case .increment: state.count.value += 1
    case .add(let amount): state.count.value += amount
    }
  }
}

extension Computed where State == CounterState {
  var count: Constant<Int> {
    state.count.constant
  }

  var countText: Signal<String> {
    state.count.signal.map { "count: \($0)" }
  }
}
