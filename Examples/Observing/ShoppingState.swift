import FluxCore
import FluxReactive

// A state whose computed properties are plain values: Observation tracks the variables they read.
final class ShoppingState: State {
  typealias Action = ShoppingAction
  typealias Mutations = ShoppingMutations

  fileprivate let taps = Variable(0)
  fileprivate let items = Variable<[String]>([])
}

enum ShoppingAction: Sendable {
  case tap
  case add(String)
  case remove(at: Int)
}

struct ShoppingMutations: Mutations {
  func commit(action: ShoppingAction, state: ShoppingState) {
    switch action {
    case .tap: state.taps.modify { $0 += 1 }
    case .add(let item): state.items.modify { $0.append(item) }
    case .remove(let index): state.items.modify { _ = $0.remove(at: index) }
    }
  }
}

extension Computed where State == ShoppingState {
  var taps: Int { state.taps.value }
  var items: [String] { state.items.value }
}
