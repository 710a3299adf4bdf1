import Dispatch
import Foundation
import Testing

@testable import FluxCore

#if canImport(Synchronization)
  import Synchronization
#endif

#if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
  /// Many threads on one futex lock, with short and long holds, extra holds, `tryLock`, signals
  /// and a fork: no wake-up is lost (the safety time-out is off), nobody overlaps, nothing is
  /// lost.
  @Suite("RecursiveLock under many threads")
  struct RecursiveLockStressTests {
    /// The thread sanitizer does not follow a child that starts threads after a fork.
    static let threadSanitizerIsOn = dlsym(nil, "__tsan_init") != nil

    final class Shared: @unchecked Sendable {
      let lock = RecursiveLock()
      // Guarded by `lock`.
      var count = 0
      var inside = 0
      var mostInside = 0
      let progress = Atomic<Int>(0)
      let finished = Atomic<Int>(0)
      let lost = Atomic<Int>(0)
      let tried = Atomic<Int>(0)
      let idsLock = NSLock()
      // Guarded by `idsLock`.
      var threadIds: [pthread_t] = []
      let quiet = Atomic<Bool>(false)  // the watchdog sends no more signals
    }

    /// Runs `threads` threads on one lock, `iterations` each; a watchdog reports a moment when
    /// the lock stays free for 20 s while a thread sleeps waiting for it and nothing advances.
    static func hammer(
      threads: Int, iterations: Int, signals: Bool, seed: UInt64
    ) -> Shared {
      let shared = Shared()
      let watchdog = Thread {
        var last = -1
        var stuckSince: DispatchTime? = nil
        while shared.finished.load(ordering: .acquiring) != threads {
          let now = shared.progress.load(ordering: .relaxed)
          let free = shared.lock.word.pointee.load(ordering: .relaxed) == 0
          let sleeping = shared.lock.sleepers.load(ordering: .relaxed) != 0
          if now == last && free && sleeping {
            if let since = stuckSince {
              if DispatchTime.now().uptimeNanoseconds - since.uptimeNanoseconds > 20_000_000_000 {
                shared.lost.store(now &+ 1, ordering: .relaxed)
                shared.lock.wakeOne()
              }
            } else {
              stuckSince = .now()
            }
          } else {
            stuckSince = nil
          }
          last = now
          if signals {
            for id in shared.idsLock.withLock({ shared.threadIds }) { pthread_kill(id, SIGUSR2) }
          }
          usleep(signals ? 200 : 2_000)
        }
        shared.quiet.store(true, ordering: .releasing)
      }
      watchdog.start()
      runOnThreads(threads) { thread in
        shared.idsLock.withLock { shared.threadIds.append(pthread_self()) }
        var random = SplitMix64(seed: seed &+ UInt64(thread))
        for _ in 0..<iterations {
          if random.chance(1, in: 8) {
            shared.tried.add(1, ordering: .relaxed)
            guard shared.lock.tryLock() else { continue }
          } else {
            shared.lock.lock()
          }
          let extra = Int.random(in: 0...3, using: &random)
          for _ in 0..<extra { shared.lock.lock() }
          shared.inside += 1
          shared.mostInside = max(shared.mostInside, shared.inside)
          let count = shared.count
          switch Int.random(in: 0..<64, using: &random) {
          case 0: usleep(100)  // a long hold: everyone else goes to sleep
          case 1...4: sched_yield()
          case 5...8:
            var spins = Int.random(in: 0..<2_000, using: &random)
            while spins > 0 { spins &-= 1 }
          default: break
          }
          shared.count = count + 1
          shared.inside -= 1
          for _ in 0..<extra {
            shared.lock.unlock()
            if random.chance(1, in: 16) { sched_yield() }
          }
          shared.lock.unlock()
          shared.progress.add(1, ordering: .relaxed)
        }
        shared.finished.add(1, ordering: .releasing)
        // Signalled until the watchdog stops: this thread must not end before.
        while !shared.quiet.load(ordering: .acquiring) { usleep(1_000) }
      }
      return shared
    }

    @Test(
      "Threads that outnumber the cores, with short and long holds, extra holds and tryLock, never overlap and are always woken: no wake-up is lost",
      arguments: [8, 16, 32])
    func manyThreadsNeverLoseAWakeUp(threads: Int) {
      RecursiveLock.wakeUpsAreChecked.store(true, ordering: .relaxed)
      defer { RecursiveLock.wakeUpsAreChecked.store(false, ordering: .relaxed) }
      let iterations = 40_000 / threads
      let shared = Self.hammer(threads: threads, iterations: iterations, signals: false, seed: UInt64(threads))
      #expect(shared.lost.load(ordering: .relaxed) == 0, "a sleeper was not woken with the lock free")
      shared.lock.lock()
      defer { shared.lock.unlock() }
      #expect(shared.mostInside == 1)
      #expect(shared.count == shared.progress.load(ordering: .relaxed))
      #expect(shared.count >= threads * iterations - shared.tried.load(ordering: .relaxed))
    }

    @Test("Signals that interrupt the waiters' sleeps cost a look at the word, nothing more")
    func signalsInterruptingWaits() async {
      await #expect(processExitsWith: .success) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0  // no SA_RESTART: the futex wait returns EINTR
        sigaction(SIGUSR2, &action, nil)
        RecursiveLock.wakeUpsAreChecked.store(true, ordering: .relaxed)
        let shared = Self.hammer(threads: 12, iterations: 3_000, signals: true, seed: 99)
        guard shared.lost.load(ordering: .relaxed) == 0, shared.mostInside == 1,
          shared.count == shared.progress.load(ordering: .relaxed)
        else { exit(1) }
        exit(0)
      }
    }

    /// Waits for the forked `child` at most `seconds`, then exits the process: 0 if the child
    /// exited with 0, 3 if it ended otherwise, 4 if it hung (it is killed then).
    static func exitAfter(child: pid_t, seconds: Int) -> Never {
      var status: Int32 = 0
      for _ in 0..<seconds * 20 {
        if waitpid(child, &status, WNOHANG) == child {
          exit((status & 0x7f) == 0 && (status >> 8) & 0xff == 0 ? 0 : 3)
        }
        usleep(50_000)
      }
      kill(child, SIGKILL)
      exit(4)
    }

    /// Installs a filter that refuses `membarrier` (EPERM), as a container's may; exits the
    /// process (5–7) if it cannot. Call it in a child, before any thread waits for a lock, so that
    /// the process never registers.
    static func refuseTheBarrier() {
      typealias Call = @convention(c) (CLong, CLong, CLong, UnsafeRawPointer?) -> CLong
      guard let symbol = dlsym(nil, "syscall") else { exit(5) }
      let call = unsafeBitCast(symbol, to: Call.self)
      #if arch(x86_64)
        let (membarrier, seccomp): (UInt32, CLong) = (324, 317)
      #else
        let (membarrier, seccomp): (UInt32, CLong) = (283, 277)
      #endif
      // struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }
      let filter: [(UInt16, UInt8, UInt8, UInt32)] = [
        (0x20, 0, 0, 0),  // load the call's number
        (0x15, 0, 1, membarrier),  // membarrier?
        (0x06, 0, 0, 0x0005_0000 | 1),  // refuse with EPERM
        (0x06, 0, 0, 0x7fff_0000),  // allow the rest
      ]
      let instructions = UnsafeMutableRawPointer.allocate(byteCount: 8 * filter.count, alignment: 8)
      for (index, (code, jt, jf, k)) in filter.enumerated() {
        instructions.storeBytes(of: code, toByteOffset: index * 8, as: UInt16.self)
        instructions.storeBytes(of: jt, toByteOffset: index * 8 + 2, as: UInt8.self)
        instructions.storeBytes(of: jf, toByteOffset: index * 8 + 3, as: UInt8.self)
        instructions.storeBytes(of: k, toByteOffset: index * 8 + 4, as: UInt32.self)
      }
      // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
      let program = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
      program.storeBytes(of: UInt16(filter.count), as: UInt16.self)
      program.storeBytes(of: instructions, toByteOffset: 8, as: UnsafeMutableRawPointer.self)
      guard call(seccomp, 1, 0, program) == 0 else { exit(6) }  // SECCOMP_SET_MODE_FILTER
      guard call(CLong(membarrier), 0, 0, nil) == -1 else { exit(7) }
    }

    @Test(
      "Where the kernel refuses the barrier, waiters look at the word again: exclusion, progress, nothing lost"
    )
    func refusedBarrier() async {
      await #expect(processExitsWith: .success) {
        Self.refuseTheBarrier()
        RecursiveLock.wakeUpsAreChecked.store(true, ordering: .relaxed)
        let shared = Self.hammer(threads: 16, iterations: 3_000, signals: false, seed: 7)
        guard shared.lost.load(ordering: .relaxed) == 0, shared.mostInside == 1,
          shared.count == shared.progress.load(ordering: .relaxed)
        else { exit(1) }
        exit(0)
      }
    }

    @Test(
      "Where the kernel refuses the barrier, threads that outnumber the cores and wait behind a long hold sleep about once each, not once per 50 µs"
    )
    func refusedBarrierWithoutConvoy() async {
      await #expect(processExitsWith: .success) {
        Self.refuseTheBarrier()
        final class Takings: @unchecked Sendable {
          let lock = RecursiveLock()
          // Guarded by `lock`.
          var count = 0
          // Guarded by `lock`: the voluntary context switches of the threads, summed.
          var sleeps = 0
        }
        let takings = Takings()
        let threads = 8
        let iterations = 2_000
        let done = DispatchGroup()
        for _ in 0..<threads {
          done.enter()
          Thread {
            var usage = rusage()
            getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD
            let before = usage.ru_nvcsw
            for iteration in 0..<iterations {
              takings.lock.lock()
              takings.count += 1
              // A hold of 1 ms now and then: seven threads wait behind it. Woken when it ends,
              // each sleeps once; polling every 50 µs, each would sleep twenty times.
              if iteration % 100 == 0 { usleep(1_000) }
              takings.lock.unlock()
            }
            getrusage(__rusage_who_t(1), &usage)
            takings.lock.lock()
            takings.sleeps += usage.ru_nvcsw - before
            takings.lock.unlock()
            done.leave()
          }.start()
        }
        done.wait()
        takings.lock.lock()
        defer { takings.lock.unlock() }
        guard takings.count == threads * iterations else { exit(1) }
        guard takings.sleeps < threads * iterations / 4 else {
          FileHandle.standardError.write(Data("\(takings.sleeps) sleeps in \(takings.count) takings\n".utf8))
          exit(2)
        }
        exit(0)
      }
    }

    @Test(
      "A child forked while a thread starts its process's first wait for a lock can wait for locks too",
      .disabled(if: threadSanitizerIsOn))
    func forkedDuringFirstWait() async {
      await #expect(processExitsWith: .success) {
        // The runtime's own first uses on this path (type metadata, held under the runtime's
        // locks) are made before the fork: only the waiter's setting up is under way at the fork.
        RecursiveLock().wakeOne()
        let first = RecursiveLock()
        let holding = Atomic<Bool>(false)
        let release = Atomic<Bool>(false)
        Thread {
          first.lock()
          holding.store(true, ordering: .releasing)
          while !release.load(ordering: .acquiring) { usleep(1_000) }
          first.unlock()
        }.start()
        while !holding.load(ordering: .acquiring) { usleep(1_000) }
        Thread {
          first.lock()  // the process's first wait: it sets up what waiting needs
          first.unlock()
        }.start()
        while first.sleepers.load(ordering: .relaxed) == 0 {}
        let child = fork()  // while the waiter sets up, at the latest a moment after
        if child == 0 {
          let second = RecursiveLock()
          let childHolding = Atomic<Bool>(false)
          Thread {
            second.lock()
            childHolding.store(true, ordering: .releasing)
            usleep(100_000)
            second.unlock()
          }.start()
          while !childHolding.load(ordering: .acquiring) { usleep(1_000) }
          second.lock()  // waits: the child's own first wait
          second.unlock()
          _exit(0)
        }
        release.store(true, ordering: .releasing)
        RecursiveLockStressTests.exitAfter(child: child, seconds: 30)
      }
    }

    @Test(
      "inv3: a child forked while a thread waits for a lock does not take that wait, which no thread of its own makes, for part of a deadlock",
      .disabled(if: threadSanitizerIsOn))
    func inv3_forkedChildReportsNoDeadlockForItsParentsWaits() async {
      let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
        let held = RecursiveLock()  // held by this thread across the fork
        let other = RecursiveLock()
        held.lock()
        // A thread that waits for `held` in the parent: registered for the deadlock check when
        // the process forks. The child has no such thread.
        let parentWaiter = Atomic<UInt>(0)
        Thread {
          parentWaiter.store(RecursiveLock.currentThread, ordering: .relaxed)
          held.lock()
          held.unlock()
        }.start()
        while held.sleepers.load(ordering: .relaxed) == 0 { usleep(1_000) }
        let child = fork()
        if child == 0 {
          // A thread of the child's own holds `other` for a moment; this thread, holding `held`,
          // waits for it: a wait that ends, no cycle.
          let holding = Atomic<Bool>(false)
          let childThread = Atomic<UInt>(0)
          Thread {
            childThread.store(RecursiveLock.currentThread, ordering: .relaxed)
            other.lock()
            holding.store(true, ordering: .releasing)
            usleep(200_000)
            other.unlock()
          }.start()
          while !holding.load(ordering: .acquiring) { usleep(1_000) }
          if childThread.load(ordering: .relaxed) == parentWaiter.load(ordering: .relaxed) {
            let note = "the child's thread has the id of the parent's waiting thread\n"
            _ = note.withCString { write(2, $0, strlen($0)) }
          }
          other.lock()
          other.unlock()
          held.unlock()
          _exit(0)
        }
        RecursiveLockStressTests.exitAfter(child: child, seconds: 60)
      }
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(!message.contains("Flux: deadlock:"), "\(message)")
    }

    @Test(
      "A child forked while threads contend for locks uses new and inherited locks on threads of its own",
      .disabled(if: threadSanitizerIsOn))
    func forkedChildUsesLocks() async {
      await #expect(processExitsWith: .success) {
        let inherited = Shared()
        let stop = Atomic<Bool>(false)
        // Threads that contend in the parent: they sleep on the inherited lock, so its sleepers
        // count and the deadlock check's waits are not empty at the fork.
        let contenders = (0..<6).map { _ in
          Thread {
            while !stop.load(ordering: .relaxed) {
              inherited.lock.lock()
              inherited.count += 1
              if inherited.count % 7 == 0 { usleep(50) }
              inherited.lock.unlock()
            }
          }
        }
        for thread in contenders { thread.start() }
        usleep(100_000)
        inherited.lock.lock()  // held by the forking thread: the child can give it back
        let child = fork()
        if child == 0 {
          inherited.lock.unlock()
          for generation in 0..<4 {
            let fresh = RecursiveLock()
            let count = Counter()
            let total = Box(0)
            runOnThreads(6) { thread in
              for iteration in 0..<2_000 {
                let lock = (iteration &+ thread) % 2 == 0 ? fresh : inherited.lock
                lock.lock()
                lock.lock()
                if iteration % 50 == 0 { usleep(20) }
                if lock === fresh { total.value += 1 }
                lock.unlock()
                lock.unlock()
                count.increment()
              }
            }
            guard count.value == 12_000, total.value == 6_000 else { _exit(2) }
            _ = generation
          }
          _exit(0)
        }
        inherited.lock.unlock()
        stop.store(true, ordering: .relaxed)
        RecursiveLockStressTests.exitAfter(child: child, seconds: 60)
      }
    }
  }
#endif
