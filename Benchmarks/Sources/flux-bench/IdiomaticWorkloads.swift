import FluxCore
import FluxReactive

// The workloads written the way the README writes them: a mutation that commits with
// `state.count.value += 1` (W6i, W10i, W12i), a variable read once and then set (W3r), and
// `value += 1` on a variable (W3m). The baseline and OpenCombine do what they do in W6 and W3.

extension FluxWorkloads {
  /// W6i and W10i: W6's store, whose mutation is `state.count.value += 1`.
  static func idiomaticStoreDispatch(tally: Tally, middlewares: [AnyMiddleware<IdiomaticState<W6i>>] = [])
    -> Prepared
  {
    let store = Store<IdiomaticState<W6i>>(
      state: IdiomaticState(), mutations: IdiomaticMutations(), executor: .immediate, middlewares: middlewares)
    store.computed.count.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for _ in range { store.actions.dispatch(action: .increment) }
      },
      // Action number i (counting from 0) sets the count to i + 1.
      expected: { sum($0) { $0 &+ 1 } }
    )
  }

  /// W12i: W6i through `Store<S>.actions`, with one live store of its state type.
  static func idiomaticGlobalDispatch(tally: Tally) -> Prepared {
    let store = Store<IdiomaticState<W12i>>(
      state: IdiomaticState(), mutations: IdiomaticMutations(), executor: .immediate)
    store.computed.count.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for _ in range { Store<IdiomaticState<W12i>>.actions.dispatch(action: .increment) }
      },
      expected: { range in withExtendedLifetime(store) { sum(range) { $0 &+ 1 } } }
    )
  }

  /// W3r: a variable whose value was read once, outside any tracking, then set.
  static func variableSetsAfterRead(tally: Tally) -> Prepared {
    let variable = Variable(0)
    variable.signal.observe { tally.add($0) }
    tally.add(variable.value)  // the one read: 0
    return Prepared(
      run: { range in
        for value in range { variable.value = value }
      },
      expected: { sum($0) }
    )
  }

  /// W3m: `value += 1` on a variable with one observer.
  static func variableAddsInPlace(tally: Tally) -> Prepared {
    let variable = Variable(0)
    variable.signal.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for _ in range { variable.value += 1 }
      },
      // Index i (counting from 0) sets the value to i + 1.
      expected: { sum($0) { $0 &+ 1 } }
    )
  }
}

/// A counter store as the README's Quick Start writes it. `Tag` makes one state type per
/// workload, so that a global dispatch reaches only the store of its own workload.
final class IdiomaticState<Tag>: State {
  typealias Action = IdiomaticAction
  typealias Mutations = IdiomaticMutations<Tag>

  let count = Variable(0)
}

enum IdiomaticAction: Sendable {
  case increment
}

struct IdiomaticMutations<Tag>: Mutations {
  func commit(action: IdiomaticAction, state: IdiomaticState<Tag>) {
    switch action {
    case .increment:
      state.count.value += 1
    }
  }
}

/// W10i's middleware: sees every action before and after its commit and lets it through.
struct IdiomaticPassThrough<Tag>: Middleware {
  func willCommit(action: IdiomaticAction, state: IdiomaticState<Tag>) {}
  func didCommit(action: IdiomaticAction, state: IdiomaticState<Tag>) {}
}

/// A state that holds a count.
protocol CountingState: State {
  var count: Variable<Int> { get }
}

extension IdiomaticState: CountingState {}

extension Computed where State: CountingState {
  /// The count, as a view reads it.
  fileprivate var count: Signal<Int> {
    state.count.signal
  }
}

/// The tags of the workloads that use ``IdiomaticState``.
enum W6i {}
enum W12i {}
