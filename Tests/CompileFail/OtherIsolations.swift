// swift-format-ignore-file
// What another actor owns stays there: no binding writes a property isolated to another global
// actor, and a conformance isolated to an actor cannot serve Flux, which calls it on the sending
// thread or the store's executor.
import FluxCore
import FluxReactive

@globalActor actor Background {
  static let shared = Background()
}

@Background final class Gauge {
  var level = 0
}

@MainActor func bindsToAnotherActor(_ signal: Signal<Int>, gauge: Gauge) -> any Disposable {
  signal.bind(to: gauge, \.level)  // expected-error {{cannot form key path to global actor 'Background'-isolated property 'level'}}
}

struct Ping: Sendable {
  var serial = 0
}

extension Ping: @MainActor Equatable {}

@MainActor func skipsWithAMainActorEquality(_ signal: Signal<Ping>) -> Signal<Ping> {
  signal.skipRepeats()  // expected-error {{main actor-isolated conformance of 'Ping' to 'Equatable' cannot satisfy conformance requirement for a 'Sendable' type parameter}}
}

@MainActor final class Meter {
  var reading = 0
}

struct MeterMutations: @MainActor Mutations {  // expected-error {{cannot form main actor-isolated conformance of 'MeterMutations' to SendableMetatype-inheriting protocol 'Mutations'}}
  let meter: Meter

  @MainActor func commit(action: Int, state: MeterState) {
    meter.reading += action
  }
}

final class MeterState: State {  // expected-error {{type 'MeterState' does not conform to protocol 'State'}}
  // expected-error@-1 {{main actor-isolated conformance of 'MeterMutations' to 'Mutations' cannot satisfy conformance requirement for a 'Sendable' type parameter 'Self.Mutations'}}
  // expected-note@-2 {{requirement specified as 'Self.Mutations' : 'Mutations' [with Self = MeterState]}}
  typealias Action = Int
  typealias Mutations = MeterMutations
}
