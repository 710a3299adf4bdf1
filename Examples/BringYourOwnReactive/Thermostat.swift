import FluxCore

/// A thermostat's target temperature, published through the hand-written ``Observable``.
final class ThermostatState: State {
  typealias Action = ThermostatAction
  typealias Mutations = ThermostatMutations

  fileprivate let target: Observable<Int>

  init(target: Int) {
    self.target = Observable(target)
  }
}

enum ThermostatAction: Sendable {
  case raise
  case lower
  case set(Int)
}

struct ThermostatMutations: Mutations {
  func commit(action: ThermostatAction, state: ThermostatState) {
    switch action {
    case .raise: state.target.value += 1
    case .lower: state.target.value -= 1
    case .set(let degrees): state.target.value = degrees
    }
  }
}

extension Actions where State == ThermostatState {
  func raise() {
    dispatch(action: .raise)
  }

  func lower() {
    dispatch(action: .lower)
  }

  func set(_ degrees: Int) {
    dispatch(action: .set(degrees))
  }
}

extension Computed where State == ThermostatState {
  /// The target now, then every change.
  var targets: AsyncStream<Int> {
    state.target.values
  }

  var observerCount: Int {
    state.target.observerCount
  }
}
