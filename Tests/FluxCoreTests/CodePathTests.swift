import Testing

@testable import FluxCore

/// The build takes the code path it was asked for: `-DFLUX_PORTABLE` compiles the lock-based
/// fallbacks of Apple platforms on Linux, and CI runs the whole suite on both paths.
@Suite("Code path")
struct CodePathTests {
  @Test("inv18: -DFLUX_PORTABLE compiles the Apple code path: no fast lane, no lock-free registry or snapshots")
  func inv18_portableBuildTakesTheApplePath() {
    #if FLUX_PORTABLE
      #expect(CodePath.isPortable, "FluxCore was compiled without the flag its tests were compiled with")
      #expect(!CodePath.usesAtomics)
    #else
      #expect(!CodePath.isPortable)
    #endif
    #if os(Linux) && !FLUX_PORTABLE
      #expect(CodePath.usesAtomics, "Linux takes the lock-free paths unless asked not to")
    #endif
    #expect(FastLane.exists == CodePath.usesAtomics, "the fast lane exists on the lock-free path only")
  }

  @Test("inv18: on the Apple code path an idle store's dispatch takes the lock: its lane never opens")
  func inv18_laneStaysClosedOnTheApplePath() {
    let store = Store(state: PathState(), mutations: PathMutations(), executor: .immediate)
    store.actions.dispatch(action: 1)
    if CodePath.usesAtomics {
      #expect(laneOpens(store), "an idle store on .immediate opens its lane")
    } else {
      #expect(store.core.lane.state == FastLane.closed)
      for _ in 0..<100 {
        store.actions.dispatch(action: 0)
        #expect(store.core.lane.state == FastLane.closed, "the lane opened on the Apple code path")
      }
    }
    #expect(store.computed.state.total == 1)
  }

  /// Whether `store`'s lane is open, or opens while the filler action 0 (which changes nothing)
  /// is dispatched. Shared middleware reaches every store, those of this suite too: while one
  /// that intercepts is registered (other suites add some for a moment, in parallel), lanes stay
  /// closed, and after each change of the list they open only once an action has seen the new
  /// middleware pass through. So the lane is promised open once that is over, not after any one
  /// dispatch.
  private func laneOpens(_ store: Store<PathState>) -> Bool {
    waitUntil {
      if store.core.lane.state == FastLane.open { return true }
      store.actions.dispatch(action: 0)
      return store.core.lane.state == FastLane.open
    }
  }
}

private final class PathState: State, @unchecked Sendable {
  typealias Action = Int
  typealias Mutations = PathMutations
  // Changed only by commits, which never overlap.
  var total = 0
}

private struct PathMutations: Mutations {
  func commit(action: Int, state: PathState) { state.total += action }
}
