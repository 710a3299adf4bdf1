import Foundation
import Testing

// Random concurrent programs over sinks, variables, operators and scopes (`ChaosRound`), checked
// against rules 2 to 8 as they run. Each round has its own seed, printed with any failure;
// FLUX_CHAOS_SEED=<seed> replays from that seed (the same steps per thread; the interleaving
// is the scheduler's), FLUX_CHAOS_ROUNDS=<n> runs more rounds and FLUX_CHAOS_STEPS=<n> makes
// each thread of a round take more steps.

@Suite("Chaos: random concurrent use of sinks, variables, operators and scopes")
struct ReactiveChaosTests {
  private static func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  private static var rounds: Int { environment("FLUX_CHAOS_ROUNDS").flatMap(Int.init) ?? 600 }
  private static var steps: Int { environment("FLUX_CHAOS_STEPS").flatMap(Int.init) ?? 120 }
  private static var firstSeed: UInt64 { environment("FLUX_CHAOS_SEED").flatMap(UInt64.init) ?? 0xC4A0_5000 }

  /// Runs `body` on a thread of its own (not one of the cooperative pool, which the rounds'
  /// tasks need) and returns its result.
  private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: body()) }.start()
    }
  }

  @Test("inv2 to inv8: random concurrent sends, observations, disposals and releases keep every rule")
  func inv2_to_inv8_holdUnderRandomConcurrentSendsObservesDisposalsAndReleases() async {
    let first = Self.firstSeed
    let rounds = Self.rounds
    print("ReactiveChaosTests: seeds \(first)..<\(first + UInt64(rounds)) (FLUX_CHAOS_SEED, FLUX_CHAOS_ROUNDS)")
    var counts: [String: Int] = [:]
    for index in 0..<rounds {
      let seed = first &+ UInt64(index)
      let threads = 2 + Int(seed % 3)
      let round = ChaosRound(seed: seed, threadCount: threads, steps: Self.steps)
      let finished = await Self.onOwnThread {
        finishOnThreads(threads, within: 60) { thread in round.run(thread: thread) }
      }
      guard finished else {
        Issue.record("seed \(seed): a thread did not finish within 60 s (deadlock?)")
        _ = Unmanaged.passRetained(round)  // its threads may still hold its locks
        return
      }
      await round.finish()
      counts.merge(round.counts, uniquingKeysWith: +)
      let problems = round.problems
      if !problems.isEmpty {
        Issue.record(Comment(rawValue: "seed \(seed), \(threads) threads:\n" + problems.joined(separator: "\n")))
        return
      }
    }
    let summary = counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    print("ReactiveChaosTests: \(summary)")
  }

  @Test("inv6, inv7: bindings keep their rules under random sends, disposals and freed targets")
  @MainActor
  func inv6_inv7_bindingsHoldUnderRandomSendsDisposalsAndFreedTargets() async {
    let first = Self.firstSeed
    let rounds = max(1, Self.rounds / 20)
    for index in 0..<rounds {
      let seed = first &+ UInt64(index)
      let round = BindingChaosRound(seed: seed)
      await round.run(steps: Self.steps)
      await round.finish()
      let problems = round.foundProblems
      if !problems.isEmpty {
        Issue.record(Comment(rawValue: "bindings, seed \(seed):\n" + problems.joined(separator: "\n")))
        return
      }
    }
  }
}
