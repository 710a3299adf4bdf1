import FluxCore

/// The shopping cart. It knows the event bus, not the other modules: it empties itself when
/// the user signs out.
final class Cart {
  private let store = Store<CartState>(state: .init(), mutations: .init(), executor: .immediate)
  private let listener: Store<EventBus>

  init() {
    let actions = store.actions
    listener = Store<EventBus> { event in
      if case .signedOut = event { actions.dispatch(action: .empty) }
    }
  }

  func add(_ item: String) {
    store.actions.dispatch(action: .add(item))
  }
}

enum CartAction: Sendable {
  case add(String)
  case empty
}

// Only `CartMutations` reads or writes `items`, and a store never runs two commits at once, so
// the store's ordering is all the guarding it needs.
final class CartState: State, @unchecked Sendable {
  typealias Action = CartAction
  typealias Mutations = CartMutations

  fileprivate var items: [String] = []
}

struct CartMutations: Mutations {
  func commit(action: CartAction, state: CartState) {
    switch action {
    case .add(let item):
      state.items.append(item)
      print("[cart] \(item) added; \(state.items.count) in the cart")
    case .empty:
      print("[cart] signed out: \(state.items.count) items removed")
      state.items.removeAll()
    }
  }
}
