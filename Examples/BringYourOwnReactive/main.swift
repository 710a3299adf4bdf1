import Dispatch
import FluxCore

// FluxCore with no reactive library at all: the state publishes through a hand-written
// observable, read as an `AsyncStream`.
//
//     swift run BringYourOwnReactive

let store = Store<ThermostatState>(
  state: .init(target: 18), mutations: .init(), executor: .queue(DispatchQueue(label: "thermostat")))

// The stream subscribes when it is made, here, before any action: the display sees every
// change. The task reads it, and owns it: when the loop ends, the stream goes and its
// termination handler stops the observation.
let display = Task { [targets = store.computed.targets] in
  for await degrees in targets {
    print("display: \(degrees) °C")
    if degrees == 22 { break }  // ending the loop ends the observation
  }
}

// Commits run on the store's queue, one at a time, in this order.
store.actions.raise()
store.actions.raise()
store.actions.lower()
store.actions.set(22)

await display.value
print("observers left: \(store.computed.observerCount)")
