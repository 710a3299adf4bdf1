import FluxCore
import Foundation

// The counter of VueFlux's README as a command-line program:
//
//     swift run Counter + + - - - '*'
//
// `+` and `-` tap the buttons of one counter; `*` increments every live counter, the shared one
// included, through the global `Store<CounterState>.actions`.

let arguments = CommandLine.arguments.dropFirst()
let taps = arguments.isEmpty ? ["+", "+", "-", "*"] : Array(arguments)
if let unknown = taps.first(where: { !["+", "-", "*"].contains($0) }) {
  FileHandle.standardError.write(Data("Counter: unknown tap \"\(unknown)\"; use +, - or *\n".utf8))
  exit(64)
}

let controller = CounterViewController()
controller.viewDidLoad()
print("shared: \(CounterStore.shared.computed.count.value)")

for tap in taps {
  print("tap \(tap)")
  switch tap {
  case "+":
    controller.incrementButtonTapped()
  case "-":
    controller.decrementButtonTapped()
  default:
    // The shared store commits on a global queue: wait until every store has committed.
    await Store<CounterState>.actions.dispatchAndWait(action: .increment)
    print("shared: \(CounterStore.shared.computed.count.value)")
  }
}
