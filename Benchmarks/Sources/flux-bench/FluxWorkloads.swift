import FluxCore
import FluxReactive

/// The workloads written with Flux, the way its documentation shows.
enum FluxWorkloads {
  static func prepare(_ workload: Workload, tally: Tally) -> Prepared {
    switch workload {
    case .w1: return sends(observers: 1, tally: tally)
    case .w2: return sends(observers: 10, tally: tally)
    case .w3: return variableSets(tally: tally)
    case .w3o: return trackedVariableSets(tally: tally)
    case .w4: return mapChain(tally: tally)
    case .w5: return churn(tally: tally)
    case .w6: return storeDispatch(tally: tally)
    case .w10: return storeDispatch(tally: tally, middlewares: [AnyMiddleware(PassThrough())])
    case .w7: return globalDispatch(tally: tally)
    case .w8: return contention(tally: tally)
    case .w9: preconditionFailure("W9 runs through memory(tally:)")
    case .w11: return observeOnImmediate(tally: tally)
    case .w12: return globalDispatchToOneStore(tally: tally)
    case .w3r: return variableSetsAfterRead(tally: tally)
    case .w3m: return variableAddsInPlace(tally: tally)
    case .w6i: return idiomaticStoreDispatch(tally: tally)
    case .w10i: return idiomaticStoreDispatch(tally: tally, middlewares: [AnyMiddleware(IdiomaticPassThrough())])
    case .w12i: return idiomaticGlobalDispatch(tally: tally)
    case .w15: return arrayAppends(tally: tally)
    case .w16: return arrayRemovals(tally: tally)
    case .w17: return todoStore(tally: tally)
    case .w18: return stringAppends(tally: tally)
    case .w13, .w14: return LogWorkloads.prepare(workload, tally: tally)
    }
  }

  private static func observeOnImmediate(tally: Tally) -> Prepared {
    let sink = Sink<Int>()
    sink.signal.observe(on: .immediate).observe { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { sink.send(value: value) }
      },
      expected: { sum($0) }
    )
  }

  private static func globalDispatchToOneStore(tally: Tally) -> Prepared {
    let store = Store<TallyState<W12>>(
      state: TallyState(tally: tally), mutations: TallyMutations(), executor: .immediate)
    return Prepared(
      run: { range in
        for value in range { Store<TallyState<W12>>.actions.dispatch(action: value) }
      },
      expected: { range in withExtendedLifetime(store) { sum(range) } }
    )
  }

  /// W12's yardstick: the same store, reached through the `store.actions` its owner keeps.
  static func keptStoreActions(tally: Tally) -> Prepared {
    let store = Store<TallyState<W12>>(
      state: TallyState(tally: tally), mutations: TallyMutations(), executor: .immediate)
    let actions = store.actions
    return Prepared(
      run: { range in
        for value in range { actions.dispatch(action: value) }
      },
      expected: { range in withExtendedLifetime(store) { sum(range) } }
    )
  }

  /// W1, W2 and the send curve: a sink with `observers` observers.
  static func sends(observers: Int, tally: Tally) -> Prepared {
    let sink = Sink<Int>()
    for _ in 0..<observers {
      sink.signal.observe { tally.add($0) }
    }
    return Prepared(
      run: { range in
        for value in range { sink.send(value: value) }
      },
      expected: { sum($0) &* observers }
    )
  }

  private static func variableSets(tally: Tally) -> Prepared {
    let variable = Variable(0)
    variable.signal.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { variable.value = value }
      },
      expected: { sum($0) }
    )
  }

  private static func mapChain(tally: Tally) -> Prepared {
    let sink = Sink<Int>()
    sink.signal
      .map { $0 &+ 1 }
      .map { $0 &* 2 }
      .map { $0 &- 3 }
      .observe { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { sink.send(value: value) }
      },
      expected: { sum($0) { ($0 &+ 1) &* 2 &- 3 } }
    )
  }

  private static func churn(tally: Tally) -> Prepared {
    let sink = Sink<Int>()
    let standing = (0..<Workload.standingObservers).map { _ in
      sink.signal.observe { tally.add($0) }
    }
    return churn(on: sink, keeping: standing, count: Workload.standingObservers, tally: tally)
  }

  /// W5 and the subscribe + dispose curve: each index adds an observer to `sink` and disposes
  /// it, beside the `count` standing observers that `standing` keeps.
  static func churn(on sink: Sink<Int>, keeping standing: some Any, count: Int, tally: Tally) -> Prepared {
    Prepared(
      run: { range in
        for _ in range {
          let disposable = sink.signal.observe { tally.add($0) }
          disposable.dispose()
        }
      },
      expected: { _ in 0 },
      finish: {
        withExtendedLifetime(standing) { sink.send(value: 7) }
        return 7 &* count
      }
    )
  }

  private static func storeDispatch(tally: Tally, middlewares: [AnyMiddleware<CounterState>] = []) -> Prepared {
    let store = Store<CounterState>(
      state: CounterState(), mutations: CounterMutations(), executor: .immediate, middlewares: middlewares)
    store.computed.count.observe { tally.add($0) }
    return Prepared(
      run: { range in
        for _ in range { store.actions.dispatch(action: .increment) }
      },
      // Action number i (counting from 0) sets the count to i + 1.
      expected: { sum($0) { $0 &+ 1 } }
    )
  }

  private static func globalDispatch(tally: Tally) -> Prepared {
    globalDispatch(to: Workload.globalStores, TallyState<W7>.self, tally: tally)
  }

  /// W7 and the global-dispatch curve: `count` stores of one state type, each action dispatched
  /// to all of them.
  static func globalDispatch<Tag>(to count: Int, _ state: TallyState<Tag>.Type, tally: Tally) -> Prepared {
    let stores = (0..<count).map { _ in
      Store<TallyState<Tag>>(state: TallyState(tally: tally), mutations: TallyMutations(), executor: .immediate)
    }
    return Prepared(
      run: { range in
        for value in range { Store<TallyState<Tag>>.actions.dispatch(action: value) }
      },
      expected: { range in withExtendedLifetime(stores) { sum(range) &* count } }
    )
  }

  private static func contention(tally: Tally) -> Prepared {
    let sink = Sink<Int>()
    sink.signal.observe { tally.add($0) }
    return Prepared(
      run: { range in
        onTwoThreads(range) { part in
          for value in part { sink.send(value: value) }
        }
      },
      expected: { sum($0) }
    )
  }

  static func memory(tally: Tally) -> MemoryWorkload {
    let sink = Sink<Int>()
    var holder: Holder<any Disposable>?
    return MemoryWorkload(
      reserve: { holder = Holder(capacity: $0) },
      subscribe: { count in
        let holder = holder!
        let signal = sink.signal
        for _ in 0..<count {
          holder.append(signal.observe { tally.add($0) })
        }
      },
      send: { sink.send(value: $0) },
      release: { holder = nil }
    )
  }
}

// MARK: W6: a counter store

private final class CounterState: State {
  typealias Action = CounterAction
  typealias Mutations = CounterMutations

  fileprivate let count = Variable(0)
}

private enum CounterAction: Sendable {
  case increment
}

private struct CounterMutations: Mutations {
  func commit(action: CounterAction, state: CounterState) {
    switch action {
    case .increment:
      state.count.modify { $0 &+= 1 }
    }
  }
}

/// W10's middleware: sees every action before and after its commit and lets it through.
private struct PassThrough: Middleware {
  func willCommit(action: CounterAction, state: CounterState) {}
  func didCommit(action: CounterAction, state: CounterState) {}
}

extension Computed where State == CounterState {
  fileprivate var count: Signal<Int> {
    state.count.signal
  }
}

// MARK: W7, W12 and the global-dispatch curve: stores that add every action into the tally

/// A state whose commits add each action into the tally. `Tag` makes one state type per use,
/// so that a global dispatch reaches only the stores of its own workload.
final class TallyState<Tag>: State {
  typealias Action = Int
  typealias Mutations = TallyMutations<Tag>

  let tally: Tally

  init(tally: Tally) {
    self.tally = tally
  }
}

struct TallyMutations<Tag>: Mutations {
  func commit(action: Int, state: TallyState<Tag>) {
    state.tally.add(action)
  }
}

/// The tags of the workloads that use ``TallyState``.
enum W7 {}
enum W12 {}
