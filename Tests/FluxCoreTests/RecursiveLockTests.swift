import Dispatch
import Foundation
import Testing

@testable import FluxCore

#if canImport(Synchronization)
  import Synchronization
#endif

/// The lock under every sink's and variable's delivery: exclusion between threads, extra holds
/// on one thread, and what one holder wrote seen by the next, also when the lock changed hands
/// while another thread waited for it (the thread sanitizer checks that part).
@Suite("RecursiveLock")
struct RecursiveLockTests {
  /// A count changed only under the lock, with no synchronisation of its own.
  final class Guarded: @unchecked Sendable {
    let lock = RecursiveLock()
    // Guarded by `lock`.
    var count = 0
    // Guarded by `lock`: how many threads are inside at once, and the most ever seen.
    var inside = 0
    var mostInside = 0
  }

  @Test("Threads that take it, and take it again inside, never overlap and lose no change")
  func exclusionWithExtraHolds() {
    let guarded = Guarded()
    let threads = 4
    let iterations = 20_000
    race(threads: threads, iterations: iterations) { thread, iteration in
      let extraHolds = (thread &+ iteration) % 3
      guarded.lock.lock()
      for _ in 0..<extraHolds { guarded.lock.lock() }
      guarded.inside += 1
      guarded.mostInside = max(guarded.mostInside, guarded.inside)
      let count = guarded.count
      if iteration % 64 == 0 { sched_yield() }  // hands the lock over while others wait for it
      guarded.count = count + 1
      guarded.inside -= 1
      for _ in 0..<extraHolds { guarded.lock.unlock() }
      guarded.lock.unlock()
    }
    guarded.lock.lock()
    defer { guarded.lock.unlock() }
    #expect(guarded.count == threads * iterations)
    #expect(guarded.mostInside == 1)
  }

  #if os(Linux)
    @Test(
      "Threads that outnumber the cores take turns without a convoy: a lock given back while others sleep may be taken by a running thread, so most takings put no thread to sleep"
    )
    func contendedLockDoesNotConvoy() {
      // The holder sometimes lets other threads run while it holds the lock, so that they go to
      // sleep waiting for it. A lock that hands itself to a sleeper when it is given back makes
      // each later taking wait for a sleeping thread to be scheduled (a convoy): nearly every
      // taking then costs a thread a sleep, a voluntary context switch, and a send thousands of
      // times its uncontended cost. The kernel counts those switches for each thread.
      final class Takings: @unchecked Sendable {
        let lock = RecursiveLock()
        // Guarded by `lock`.
        var count = 0
        // Guarded by `lock`: the voluntary context switches of the threads, summed as each ends.
        var sleeps = 0
      }
      let takings = Takings()
      let threads = 8
      let iterations = 2_000
      runOnThreads(threads) { _ in
        let before = voluntaryContextSwitches()
        for iteration in 0..<iterations {
          takings.lock.lock()
          takings.count += 1
          if iteration % 100 == 0 { sched_yield() }
          takings.lock.unlock()
        }
        let sleeps = voluntaryContextSwitches() - before
        takings.lock.lock()
        takings.sleeps += sleeps
        takings.lock.unlock()
      }
      takings.lock.lock()
      defer { takings.lock.unlock() }
      #expect(takings.count == threads * iterations)
      #expect(
        takings.sleeps < takings.count / 4,
        "\(takings.sleeps) sleeps in \(takings.count) takings: the lock is handed from sleeper to sleeper")
    }
  #endif

  #if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
    @Test(
      "A thread that sleeps waiting for the lock is woken when it is given back, whenever the holder gives it back while the waiter goes to sleep: no wake-up is lost"
    )
    func noLostWakeUp() {
      // Round after round, one thread holds the lock while the other comes to wait for it; the
      // holder gives it back at a moment that moves across the waiter's way to sleep (counting
      // itself, the barrier, the last look at the word), then takes it no more until the waiter
      // has it. A wake-up lost there leaves the waiter asleep with the lock free and nobody left
      // to wake it: the safety time-out is off, so only the holder's watchdog ends that round.
      final class Rounds: @unchecked Sendable {
        let lock = RecursiveLock()
        let round = Atomic<Int>(0)  // the round the holder holds the lock for
        let waiting = Atomic<Int>(0)  // the last round the waiter came to wait in
        let got = Atomic<Int>(0)  // the last round the waiter took the lock in
        let lost = Atomic<Int>(0)  // the round whose waiter was not woken in 10 s, if any
      }
      RecursiveLock.wakeUpsAreChecked.store(true, ordering: .relaxed)
      defer { RecursiveLock.wakeUpsAreChecked.store(false, ordering: .relaxed) }
      let rounds = Rounds()
      let count = 4_000
      runOnThreads(2) { index in
        if index == 0 {
          for round in 1...count {
            rounds.lock.lock()
            rounds.round.store(round, ordering: .releasing)
            while rounds.waiting.load(ordering: .acquiring) != round { sched_yield() }
            // Give it back after 0 to about 60 µs of spinning: before, while and after the
            // waiter counts itself and sleeps.
            var spins = (round &* 7919) % 3_000
            if round % 4 == 0 {
              while rounds.lock.sleepers.load(ordering: .relaxed) == 0 { spins &+= 1 }
            }
            while spins > 0 { spins &-= 1 }
            rounds.lock.unlock()
            let deadline = DispatchTime.now() + 10
            while rounds.got.load(ordering: .acquiring) != round {
              if DispatchTime.now() > deadline {
                // Lost: stop here, and wake the sleeper.
                rounds.lost.store(round, ordering: .releasing)
                while rounds.got.load(ordering: .acquiring) != round {
                  rounds.lock.wakeOne()
                  sched_yield()
                }
                return
              }
              sched_yield()
            }
          }
        } else {
          for round in 1...count {
            while rounds.round.load(ordering: .acquiring) != round {
              if rounds.lost.load(ordering: .acquiring) != 0 { return }
              sched_yield()
            }
            rounds.waiting.store(round, ordering: .releasing)
            rounds.lock.lock()
            rounds.got.store(round, ordering: .releasing)
            rounds.lock.unlock()
          }
        }
      }
      let lost = rounds.lost.load(ordering: .relaxed)
      #expect(lost == 0, "in round \(lost), the waiter was not woken when the lock was given back")
    }
  #endif

  @Test("A thread that waits gets the lock once every hold of the holder is given back")
  func waiterAfterEveryHold() {
    let guarded = Guarded()
    let holding = DispatchSemaphore(value: 0)
    let waiterDone = DispatchSemaphore(value: 0)
    let releases = Box(0)  // written only under the lock
    guarded.lock.lock()
    guarded.lock.lock()
    guarded.lock.lock()
    let waiter = Thread {
      holding.signal()
      guarded.lock.lock()
      guarded.count = releases.value  // the holds given back before this thread got in
      guarded.lock.unlock()
      waiterDone.signal()
    }
    waiter.start()
    holding.wait()
    for _ in 0..<2 {
      // Still held once more: the waiter cannot have got in.
      #expect(waiterDone.wait(timeout: .now() + 0.05) == .timedOut)
      releases.value += 1
      guarded.lock.unlock()
    }
    #expect(waiterDone.wait(timeout: .now() + 0.05) == .timedOut)
    releases.value += 1
    guarded.lock.unlock()
    #expect(waiterDone.wait(timeout: .now() + 30) == .success)
    guarded.lock.lock()
    #expect(guarded.count == 3)
    guarded.lock.unlock()
  }

  @Test("tryLock succeeds on the holding thread, as one more hold, and fails on any other")
  func tryLockByHolderAndOthers() {
    let lock = RecursiveLock()
    #expect(lock.tryLock())
    #expect(lock.tryLock())  // the holder: one more hold
    #expect(onAnotherThread { lock.tryLock() } == false)
    lock.unlock()
    #expect(onAnotherThread { lock.tryLock() } == false)  // still held once
    lock.unlock()
    #expect(
      onAnotherThread { () -> Bool in
        guard lock.tryLock() else { return false }
        lock.unlock()
        return true
      })
  }

  @Test("Releasing a taken value happens after the hold is given back")
  func releasingAfterUnlock() {
    let lock = RecursiveLock()
    let freedWhileHeld = Box<Bool?>(nil)
    do {
      lock.lock()
      let canary = Canary {
        // Another thread can take the lock only if this thread gave it back.
        freedWhileHeld.value = !onAnotherThread {
          guard lock.tryLock() else { return false }
          lock.unlock()
          return true
        }
      }
      lock.unlock(releasing: canary)
    }
    #expect(freedWhileHeld.value == false)
  }
}

#if os(Linux)
  /// The voluntary context switches of the calling thread so far: how many times it slept.
  private func voluntaryContextSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD
    return usage.ru_nvcsw
  }
#endif

/// Runs `body` on a new thread (never the caller's, as `DispatchQueue.sync` may) and returns
/// its result.
private func onAnotherThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
  let result = Box<T?>(nil)
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    result.value = body()
    done.signal()
  }
  thread.start()
  done.wait()
  return result.value!
}
