// swift-format-ignore-file
// Observers that would race do not compile: any thread may send, so an observer is @Sendable.
import FluxReactive

final class Counter {  // expected-note 5 {{class 'Counter' does not conform to the 'Sendable' protocol}}
  var count = 0
}

func countsOnTheSendingThread(_ sink: Sink<Int>) -> Int {
  let counter = Counter()
  sink.signal.observe { _ in counter.count += 1 }  // expected-error {{capture of 'counter' with non-Sendable type 'Counter' in a '@Sendable' closure}}
  return counter.count
}

func collectsIntoAVar(_ sink: Sink<Int>) -> [Int] {
  var seen: [Int] = []
  sink.signal.observe { seen.append($0) }  // expected-error {{mutation of captured var 'seen' in concurrently-executing code}}
  return seen
}

func mapsWithAVar(_ sink: Sink<Int>) {
  var offset = 0
  _ = sink.signal.map { $0 + offset }  // expected-error {{reference to captured var 'offset' in concurrently-executing code}}
  offset = 1
}

func producesIntoACounter() {
  let counter = Counter()
  _ = Signal<Int> { send in
    counter.count += 1  // expected-error {{capture of 'counter' with non-Sendable type 'Counter' in a '@Sendable' closure}}
    send(counter.count)
    return AnyDisposable()
  }
}

// A mapped signal of a Sendable type may be observed from any thread, where its transform
// would read the non-Sendable value: no map of non-Sendable values.
func mapsANonSendableValue(_ variable: Variable<Counter>) {
  _ = variable.signal.map { $0.count }  // expected-error {{type 'Counter' does not conform to the 'Sendable' protocol}}
}

// A scoped observation frees its object on the sending thread when every other reference goes
// during a call, and the object's deinit runs there: the object is Sendable.
func scopesToANonSendableObject(_ sink: Sink<Int>) {
  let owner = Counter()
  sink.signal.observe(duringScopeOf: owner) { _ in }  // expected-error {{type 'Counter' does not conform to the 'Sendable' protocol}}
  _ = sink.signal.latest(startingWith: 0, duringScopeOf: owner)  // expected-error {{type 'Counter' does not conform to the 'Sendable' protocol}}
}
