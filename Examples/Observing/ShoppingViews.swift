#if canImport(SwiftUI)
  import FluxCore
  import SwiftUI

  // The same store in SwiftUI: a view reads `store.computed`, and Observation re-renders it when a
  // commit changes what it read. No macro, no `ObservableObject`. Give the store `.mainThread`.

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  struct CounterView: View {
    let store: Store<ShoppingState>

    var body: some View {
      Button("Taps: \(store.computed.taps)") {
        store.actions.dispatch(action: .tap)
      }
    }
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  struct ShoppingListView: View {
    let store: Store<ShoppingState>

    var body: some View {
      List {
        ForEach(Array(store.computed.items.enumerated()), id: \.offset) { index, item in
          Text(item)
            .onTapGesture { store.actions.dispatch(action: .remove(at: index)) }
        }
        Button("Add Milk") { store.actions.dispatch(action: .add("Milk")) }
      }
    }
  }
#endif
