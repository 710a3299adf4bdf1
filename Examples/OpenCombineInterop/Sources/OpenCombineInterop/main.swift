import FluxCore
import OpenCombine

// FluxCore with OpenCombine as the reactive library: the state holds a `CurrentValueSubject`,
// `Computed` hands out publishers, and views subscribe with `sink`.

let store = Store<CartState>(state: .init(), mutations: .init(), executor: .immediate)
var subscriptions = Set<AnyCancellable>()

store.computed.items
  .sink { print("items: \($0)") }
  .store(in: &subscriptions)
store.computed.count
  .sink { print("count: \($0)") }
  .store(in: &subscriptions)

store.actions.add("tea")
store.actions.add("biscuits")
store.actions.remove("tea")
Store<CartState>.actions.empty()  // global dispatch: every live cart

subscriptions.removeAll()  // cancels both subscriptions
store.actions.add("jam")  // no one is listening any more
print("done")
