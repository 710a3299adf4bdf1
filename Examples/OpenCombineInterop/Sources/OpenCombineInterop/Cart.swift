import FluxCore
import OpenCombine

/// A shopping cart whose state publishes through OpenCombine.
final class CartState: State, @unchecked Sendable {
  typealias Action = CartAction
  typealias Mutations = CartMutations

  // `CurrentValueSubject` guards its value with a lock of its own, and only `CartMutations`
  // sends to it, one commit at a time.
  fileprivate let items = CurrentValueSubject<[String], Never>([])
}

enum CartAction: Sendable {
  case add(String)
  case remove(String)
  case empty
}

struct CartMutations: Mutations {
  func commit(action: CartAction, state: CartState) {
    switch action {
    case .add(let item):
      state.items.value.append(item)
    case .remove(let item):
      state.items.value.removeAll { $0 == item }
    case .empty:
      state.items.value = []
    }
  }
}

extension Actions where State == CartState {
  func add(_ item: String) {
    dispatch(action: .add(item))
  }

  func remove(_ item: String) {
    dispatch(action: .remove(item))
  }

  func empty() {
    dispatch(action: .empty)
  }
}

extension Computed where State == CartState {
  /// The items now, then after every change.
  var items: AnyPublisher<[String], Never> {
    state.items.eraseToAnyPublisher()
  }

  /// The number of items, once per change of that number.
  var count: AnyPublisher<Int, Never> {
    state.items.map(\.count).removeDuplicates().eraseToAnyPublisher()
  }
}
