// swift-format-ignore-file
// What is sound compiles, with little ceremony: no diagnostics expected in this file.
import Dispatch
import FluxCore
import FluxReactive

@MainActor final class Label {
  var text: String?
}

@MainActor final class ViewModel {
  var title = ""
  let label = Label()
  let scope = DisposableScope()

  func start(_ signal: Signal<String>) {
    scope += signal.observe(on: .mainActor) { [weak self] title in self?.title = title }
    scope += signal.bind(to: label, \.text)
    scope += signal.bind(to: label) { label, text in label.text = text }
    scope += Binder(target: label) { label, text in label.text = text }.bind(signal: signal)
  }
}

func observesWithSendableState(_ sink: Sink<Int>) -> Variable<Int> {
  let total = Variable(0)
  sink.signal.observe { value in total.modify { $0 += value } }
  sink.signal.map { $0 * 2 }.observe(on: .queue(.global())).observe { print($0) }
  return total
}

let producer: Signal<Int>.Producer = { send in
  send(1)
  return AnyDisposable()
}
let context: Executor.Context = { work in DispatchQueue.global().async(execute: work) }

// A main-actor object (a view, a view controller) is Sendable, and bounds a scoped observation.
@MainActor final class Headline {
  var text = Constant("")

  func follow(_ sink: Sink<String>) {
    sink.signal.observe(duringScopeOf: self) { print($0) }
    text = sink.signal.latest(startingWith: "", duringScopeOf: self)
  }
}

// A main-actor closure may capture plain objects of the main actor: Flux lets go of it there.
final class Tally {
  var count = 0
}

@MainActor final class Dashboard {
  let tally = Tally()
  let scope = DisposableScope()

  func follow(_ signal: Signal<Int>, label: Label) {
    let tally = tally
    scope += signal.observe(on: .mainActor) { tally.count += $0 }
    scope += signal.bind(to: label) { label, count in
      tally.count += count
      label.text = "\(count)"
    }
  }
}

// A variable of a value that is not Sendable hands out Sendable disposables: they keep no value.
func observesAPlainValue() -> DisposableScope {
  let variable = Variable(Tally())
  let scope = DisposableScope()
  scope += variable.signal.observe { _ in }
  scope += variable.constant.signal.observe { _ in }
  variable.value.count += 1
  DispatchQueue.global().async { scope.dispose() }
  return scope
}
