import FluxCore
import FluxTesting
import Foundation
import XCTest

/// The synchronous leak check where XCTest runs a synchronous test: on the main thread.
final class LeakTrackerXCTests: XCTestCase {
  func testSynchronousLeakTrackingOnTheMainThreadWaitsForAStoreStillCommittingOnAQueue() {
    let queue = DispatchQueue(label: "leaks")
    for _ in 0..<50 {
      withLeakTracking { leaks in
        let slow = SlowDidCommit()
        let state = leaks.track(CounterState())
        let store = leaks.track(
          Store<CounterState>(
            state: state, mutations: .init(), executor: .queue(queue), middlewares: [AnyMiddleware(slow)]))
        store.actions.dispatch(action: .add(1))
        _ = slow.committed.wait(timeout: .now() + .seconds(10))  // the drain is in its didCommit now
      }
    }
  }
}
