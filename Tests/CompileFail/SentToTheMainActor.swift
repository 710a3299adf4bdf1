// swift-format-ignore-file
// What the main actor takes stays there: a main-actor observer takes no state its caller keeps
// using, and a target bound on the main actor is not sent elsewhere afterwards.
import FluxCore
import FluxReactive

final class Tally {
  var count = 0
}

func countsOnMainAndHere(_ signal: Signal<Int>) -> Int {
  let tally = Tally()
  signal.observe(on: .mainActor) { tally.count += $0 }  // expected-error {{sending 'tally' risks causing data races}}
  // expected-note@-1 {{'tally' is captured by a main actor-isolated closure. main actor-isolated uses in closure may race against later nonisolated uses}}
  tally.count += 1  // expected-note {{access can happen concurrently}}
  return tally.count
}

final class PlainView {
  var isHidden = false
}

@MainActor func bindsThenSendsTheTarget(_ signal: Signal<Bool>) -> any Disposable {
  let view = PlainView()
  let binding = signal.bind(to: view) { view, isHidden in view.isHidden = isHidden }
  Task.detached { view.isHidden.toggle() }  // expected-error {{passing closure as a 'sending' parameter risks causing data races between main actor-isolated code and concurrent execution of the closure}}
  // expected-note@-1 {{closure captures 'view' which is accessible to main actor-isolated code}}
  return binding
}
