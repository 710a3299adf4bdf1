import Dispatch
import Foundation
import Testing

@testable import FluxCore

// Random programs run on two to four threads at once against stores on `.immediate`, a serial
// queue, a concurrent queue and contexts of their own: dispatch to one store and to every store,
// with and without a waiter (`dispatchAndWait` too), middleware that holds `Proceed`s for other
// threads to decide or drop, shared middleware coming and going, mutations and hooks that
// dispatch again, and stores freed at any moment; commits also decide, free, create and dispatch.
// Rules 10, 11, 12, 14, 15 and 16 are checked as the program runs, every live store is checked to
// have committed what it was sent once it drains, and everything is checked freed once it
// settles. A failure prints the seed: FLUX_CHAOS_SEED=<seed> replays the random choices (not the
// threads' timing); FLUX_CHAOS_ROUNDS=<n> runs more rounds; FLUX_CHAOS_STATS=1 prints what ran;
// FLUX_CHAOS_MAIN=1 adds stores on `.mainThread` and on the main queue (which a runner must
// drain: Swift Testing's does).

@Suite("Chaos: random programs on several threads")
struct StoreChaosTests {
  private static var baseSeed: UInt64 {
    if let text = ProcessInfo.processInfo.environment["FLUX_CHAOS_SEED"], let seed = UInt64(text) { return seed }
    return UInt64.random(in: 0..<UInt64.max)
  }

  private static var rounds: Int {
    ProcessInfo.processInfo.environment["FLUX_CHAOS_ROUNDS"].flatMap(Int.init) ?? 40
  }

  /// Runs `body(index)` on `count` threads of their own; `false` if they have not all returned
  /// within `seconds` (they are left behind). Waits without blocking a thread of the
  /// cooperative pool, which the rounds' `dispatchAndWait` tasks (and other tests) need.
  private static func runOnThreads(
    _ count: Int, seconds: Double, _ body: @escaping @Sendable (Int) -> Void
  ) async -> Bool {
    let finished = DispatchGroup()
    for index in 0..<count {
      finished.enter()
      Thread {
        body(index)
        finished.leave()
      }.start()
    }
    let outcome = ChaosOnce()
    return await withCheckedContinuation { continuation in
      finished.notify(queue: .global()) { if outcome.take() { continuation.resume(returning: true) } }
      DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
        if outcome.take() { continuation.resume(returning: false) }
      }
    }
  }

  @Test("inv10, inv11, inv12, inv14, inv15, inv16: random programs on several threads keep every store rule")
  func inv14_randomProgramsKeepEveryRule() async {
    let base = Self.baseSeed
    let rounds = Self.rounds
    let stats = ChaosStats()
    let printsStats = ProcessInfo.processInfo.environment["FLUX_CHAOS_STATS"] != nil
    defer { if printsStats { print("StoreChaosTests: \(stats.description)") } }
    print("StoreChaosTests: FLUX_CHAOS_SEED=\(base) FLUX_CHAOS_ROUNDS=\(rounds)")
    for round in 0..<rounds {
      let seed = base &+ UInt64(round) &* 0x1_0000
      let failures = await Self.runRound(seed: seed, stats: stats)
      #expect(
        failures.isEmpty,
        "FLUX_CHAOS_SEED=\(base), round \(round) (seed \(seed)):\n\(failures.joined(separator: "\n"))")
      if !failures.isEmpty { return }
    }
  }

  /// One round; returns what went wrong.
  private static func runRound(seed: UInt64, stats: ChaosStats) async -> [String] {
    let chaos = Chaos(seed: seed)
    defer { chaos.stats.merge(into: stats) }
    var random = SplitMix64(seed: seed)
    let threads = Int.random(in: 2...4, using: &random)
    let steps = Int.random(in: 100..<250, using: &random)
    let returned = await runOnThreads(threads, seconds: 60) { thread in
      var random = SplitMix64(seed: seed &+ UInt64(thread) &+ 1)
      var sequence = 0
      for _ in 0..<steps { chaos.step(thread: thread, sequence: &sequence, &random) }
    }
    guard returned else { return chaos.failureList + ["threads still running after 60 s: a deadlock?"] }
    await chaos.checkLiveStoresCommittedEverything()
    chaos.tearDown(&random)
    if await !eventually({ chaos.waiting.value == 0 }) {
      chaos.fail(
        "\(chaos.waiting.value) waiters never answered (\(chaos.unstartedTasks.value) of their tasks never started)")
    }
    if await !eventually({ chaos.liveMiddleware.value == 0 }) {
      chaos.fail("\(chaos.liveMiddleware.value) middleware outlived their stores")
    }
    if await !eventually({ chaos.liveMutations.value == 0 }) {
      chaos.fail("\(chaos.liveMutations.value) mutations outlived their stores")
    }
    // An interception under way when its store was freed may still keep its Proceed.
    if await !eventually({
      chaos.dropAllKept()
      return chaos.liveWatched == 0
    }) {
      chaos.fail(
        "\(chaos.liveWatched) cores, states or Proceed tickets outlived their stores: \(chaos.liveWatchedTypes)")
    }
    let unhooked = chaos.committedWithoutHooks
    if !unhooked.isEmpty {
      chaos.fail("\(unhooked.count) actions committed without the hooks of the shared middleware they started with")
    }
    return chaos.failureList
  }
}
