import Dispatch
import FluxCore
import Observation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Two terminal "views" that re-render as a SwiftUI view does: each renders inside
// `withObservationTracking`, and a change to what it read renders it again, on the main queue.
// The store commits on `.mainThread`, so changes, and so re-renders, happen there.

let store = Store<ShoppingState>(state: .init(), mutations: .init(), executor: .mainThread)

/// Prints what `body` returns, and prints it again after each change to what `body` read.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
func render(_ body: @escaping @MainActor () -> String) {
  let text = withObservationTracking(body) {
    // Called once, before the change, on the thread that changes the value: here, main.
    DispatchQueue.main.async { MainActor.assumeIsolated { render(body) } }
  }
  print(text)
}

let steps: [(String, @MainActor () -> Void)] = [
  ("tap", { store.actions.dispatch(action: .tap) }),
  ("add Milk", { store.actions.dispatch(action: .add("Milk")) }),
  ("add Eggs", { store.actions.dispatch(action: .add("Eggs")) }),
  ("tap", { store.actions.dispatch(action: .tap) }),
  ("remove 1", { store.actions.dispatch(action: .remove(at: 0)) }),
]

/// Runs one step, then the next once the main queue has rendered what changed.
@MainActor
func run(_ index: Int) {
  guard index < steps.count else { exit(0) }
  print("> \(steps[index].0)")
  steps[index].1()
  DispatchQueue.main.async { MainActor.assumeIsolated { run(index + 1) } }
}

// Observation itself needs macOS 14, iOS 17, tvOS 17 or watchOS 10; Linux always has it.
guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else {
  print("This example needs Observation: macOS 14, iOS 17, tvOS 17 or watchOS 10.")
  exit(1)
}
render { "[counter] taps: \(store.computed.taps)" }
render { "[list] " + (store.computed.items.isEmpty ? "empty" : store.computed.items.joined(separator: ", ")) }
DispatchQueue.main.async { MainActor.assumeIsolated { run(0) } }
dispatchMain()
