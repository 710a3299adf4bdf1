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
    let laneState = store.core.lane.state
    if CodePath.usesAtomics {
      #expect(laneState == FastLane.open, "an idle store on .immediate opens its lane")
    } else {
      #expect(laneState == FastLane.closed)
    }
    #expect(store.computed.state.total == 1)
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
