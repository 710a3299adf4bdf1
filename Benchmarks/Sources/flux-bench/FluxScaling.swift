import Dispatch
import FluxCore
import FluxReactive

/// The scaling curves written with Flux, the way its documentation shows.
enum FluxScaling {
  static func point(_ curve: Curve, size: Int, tally: Tally) -> ScalingPoint {
    switch curve {
    case .send: return ScalingPoint(prepared: FluxWorkloads.sends(observers: size, tally: tally))
    case .global:
      return liveStores(size) { FluxWorkloads.globalDispatch(to: size, TallyState<Spread>.self, tally: tally) }
    case .churn: return churn(standing: size, tally: tally)
    case .queue:
      return ScalingPoint(prepared: batches(of: size, on: .queue(DispatchQueue(label: "flux")), tally: tally))
    case .main: return ScalingPoint(prepared: batches(of: size, on: .mainThread, tally: tally))
    }
  }

  /// Subscribe + dispose beside `count` standing observers, whose memory ``standing(_:_:)``
  /// measures.
  private static func churn(standing count: Int, tally: Tally) -> ScalingPoint {
    let sink = Sink<Int>()
    let signal = sink.signal
    let (observers, bytesPerItem) = standing(count) { signal.observe { tally.add($0) } as any Disposable }
    let prepared = FluxWorkloads.churn(on: sink, keeping: observers, count: count, tally: tally)
    return ScalingPoint(prepared: prepared, bytesPerItem: bytesPerItem)
  }

  /// Each operation dispatches `size` actions from the calling thread and waits until the
  /// last of them has been committed.
  private static func batches(of size: Int, on executor: Executor, tally: Tally) -> Prepared {
    let committed = DispatchSemaphore(value: 0)
    let store = Store<BatchState>(
      state: BatchState(tally: tally, batch: size, committed: committed), mutations: BatchMutations(),
      executor: executor)
    return Prepared(
      run: { range in
        for _ in range {
          for _ in 0..<size { store.actions.dispatch(action: 1) }
          committed.wait()
        }
      },
      expected: { $0.count &* size }
    )
  }
}

/// The tag of the global-dispatch curve's stores.
private enum Spread {}

// MARK: Throughput: a store that signals when a batch is committed

private final class BatchState: State {
  typealias Action = Int
  typealias Mutations = BatchMutations

  let tally: Tally
  let batch: Int
  let committed: DispatchSemaphore

  init(tally: Tally, batch: Int, committed: DispatchSemaphore) {
    self.tally = tally
    self.batch = batch
    self.committed = committed
  }
}

private struct BatchMutations: Mutations {
  func commit(action: Int, state: BatchState) {
    state.tally.add(action)
    if state.tally.total % state.batch == 0 { state.committed.signal() }
  }
}
