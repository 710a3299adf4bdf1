import FluxCore
import FluxReactive
import FluxTesting
import Foundation

/// A basket for the tests of session tests: actions with several labelled values, declared in
/// an order that is not the alphabetical one a log's JSON keys have, a struct inside an action,
/// and a state a test makes from a session's label.
final class BasketState: State, SessionTestable {
  typealias Action = BasketAction
  typealias Mutations = BasketMutations

  let owner: String
  fileprivate let items = Variable<[BasketItem]>([])

  init(owner: String) {
    self.owner = owner
  }

  var snapshot: [BasketItem] { items.value }

  static func restore(_ snapshot: [BasketItem]) -> BasketAction { .restore(items: snapshot) }

  static func sessionStart(label: String) -> BasketState { BasketState(owner: label) }
}

struct BasketItem: Codable, Equatable, Sendable {
  let name: String
  var quantity: Int
  var note: String?
}

enum BasketAction: Codable, Equatable, Sendable {
  case put(quantity: Int, name: String)
  case note(String, on: String)
  case take(name: String)
  case restore(items: [BasketItem])
  case empty
}

struct BasketMutations: Mutations {
  func commit(action: BasketAction, state: BasketState) {
    state.items.modify { items in
      switch action {
      case .put(let quantity, let name):
        if let index = items.firstIndex(where: { $0.name == name }) {
          items[index].quantity += quantity
        } else {
          items.append(BasketItem(name: name, quantity: quantity))
        }
      case .note(let note, let name):
        if let index = items.firstIndex(where: { $0.name == name }) { items[index].note = note }
      case .take(let name):
        items.removeAll { $0.name == name }
      case .restore(let restored):
        items = restored
      case .empty:
        items = []
      }
    }
  }
}

/// Cancels a `put` of no item at all.
struct NoEmptyPuts: Middleware {
  func intercept(action: BasketAction, state: BasketState, proceed: Proceed) {
    if case .put(let quantity, _) = action, quantity <= 0 { proceed.cancel() } else { proceed() }
  }
}
