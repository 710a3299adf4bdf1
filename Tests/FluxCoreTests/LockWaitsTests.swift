import Dispatch
import Foundation
import Testing

@testable import FluxCore

/// The deadlock check of the Linux delivery lock (``LockWaits``) stops the program only for a
/// cycle of waits: never for threads that take locks in one order, however they interleave.
@Suite("Deadlock detection")
struct LockWaitsTests {
  /// Locks of one generation, taken in the order of their index.
  final class Locks: Sendable {
    let locks: [RecursiveLock]
    init(count: Int) { locks = (0..<count).map { _ in RecursiveLock() } }
  }

  @Test(
    "inv3: threads that take locks in one order, again and again, with extra holds, tryLock and releases under way, never stop with a deadlock"
  )
  func inv3_locksTakenInOneOrderNeverReportADeadlock() {
    let threads = 6
    let generations = 12
    let iterations = 3_000
    let taken = Counter()
    for generation in 0..<generations {
      // New locks each generation: the old ones are freed, so their memory is reused, and new
      // threads come (thread ids are reused too).
      let locks = Locks(count: 4)
      runOnThreads(threads) { thread in
        var random = SplitMix64(seed: UInt64(generation &* 131 &+ thread))
        var held: [(RecursiveLock, extraHolds: Int)] = []
        for _ in 0..<iterations {
          // An ascending subset of the locks: one order for every thread, so no cycle of waits.
          for index in locks.locks.indices where random.chance(1, in: 2) {
            let lock = locks.locks[index]
            if random.chance(1, in: 4) {
              guard lock.tryLock() else { continue }
            } else {
              lock.lock()
            }
            let extraHolds = Int.random(in: 0...2, using: &random)
            for _ in 0..<extraHolds { lock.lock() }
            held.append((lock, extraHolds))
            if random.chance(1, in: 16) { sched_yield() }
          }
          taken.increment()
          // Released in any order: only the order of taking matters for a cycle.
          held.shuffle(using: &random)
          for (lock, extraHolds) in held {
            for _ in 0..<extraHolds { lock.unlock() }
            if random.chance(1, in: 32) { sched_yield() }
            lock.unlock()
          }
          held.removeAll(keepingCapacity: true)
        }
      }
    }
    #expect(taken.value == generations * threads * iterations)
  }
}
