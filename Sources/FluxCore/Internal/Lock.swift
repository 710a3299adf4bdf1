#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Bionic)
  import Bionic
#else
  #error("Flux needs a platform lock: Darwin, Glibc, Musl or Bionic.")
#endif

#if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
  import Synchronization
#endif

/// A mutual-exclusion lock: `os_unfair_lock` on Darwin, `pthread_mutex_t` elsewhere.
///
/// Allocated once, never moved. Not recursive: locking it twice on one thread is a
/// programming error (a deadlock on Linux, a crash on Darwin). Use ``RecursiveLock`` where
/// the holder may call code that takes the same lock again.
@usableFromInline
package final class Lock: @unchecked Sendable {
  // The lock word is allocated once and only ever touched through the platform calls.
  #if canImport(Darwin)
    @usableFromInline
    let word: UnsafeMutablePointer<os_unfair_lock>
  #else
    @usableFromInline
    let word: UnsafeMutablePointer<pthread_mutex_t>
  #endif

  /// Creates an unlocked lock.
  package init() {
    #if canImport(Darwin)
      word = .allocate(capacity: 1)
      word.initialize(to: os_unfair_lock())
    #else
      word = .allocate(capacity: 1)
      word.initialize(to: pthread_mutex_t())
      let status = pthread_mutex_init(word, nil)
      guard status == 0 else { fatalError("Flux: pthread_mutex_init failed with status \(status).") }
    #endif
  }

  deinit {
    #if !canImport(Darwin)
      let status = pthread_mutex_destroy(word)
      assert(status == 0, "Flux: a lock was destroyed while held (status \(status)).")
    #endif
    word.deinitialize(count: 1)
    word.deallocate()
  }

  /// Acquires the lock, blocking until it is available.
  @inlinable
  package func lock() {
    #if canImport(Darwin)
      os_unfair_lock_lock(word)
    #else
      let status = pthread_mutex_lock(word)
      assert(status == 0, "Flux: pthread_mutex_lock failed with status \(status).")
    #endif
  }

  /// Releases the lock; the calling thread must hold it.
  @inlinable
  package func unlock() {
    #if canImport(Darwin)
      os_unfair_lock_unlock(word)
    #else
      let status = pthread_mutex_unlock(word)
      assert(status == 0, "Flux: pthread_mutex_unlock failed with status \(status).")
    #endif
  }

  /// Acquires the lock if it is free; `false`, without waiting, if anyone holds it (this
  /// thread included).
  @inlinable
  package func tryLock() -> Bool {
    #if canImport(Darwin)
      os_unfair_lock_trylock(word)
    #else
      pthread_mutex_trylock(word) == 0
    #endif
  }

  /// Runs `body` while holding the lock. `body` must not call code that takes this lock.
  @inlinable
  package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    lock()
    defer { unlock() }
    return try body()
  }
}

#if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
  /// A lock that the thread holding it may take again: on Linux, a futex lock word with the id
  /// of the thread that holds it and a count of its extra holds beside it.
  ///
  /// Flux uses it where user code runs while the lock is held (a sink's delivery), so that the
  /// same thread can come back in; what a reentrant call then does is decided explicitly by the
  /// owner of the lock (queue, never nest), not by the lock.
  ///
  /// Taken and given back without a call, as cheaply as a lock can be: a compare-and-exchange
  /// takes it, and a plain releasing store and a load give it back when nobody sleeps waiting for
  /// it (the benchmarks' W1–W6, against a baseline that takes the same compare-and-exchange and
  /// store and cannot sleep at all).
  ///
  /// The word is 0 (free) or 1 (held); `sleepers` counts the threads that may sleep waiting for
  /// it. Given back, the word goes to 0 and, if anyone may sleep, one sleeper is woken to compete
  /// for it: a running thread may take it first. That is what keeps it fast when more threads
  /// than cores send into one sink. A lock that hands itself to a sleeper instead (the
  /// priority-inheritance futex under Swift 6.3's `Synchronization.Mutex`) makes each taking wait
  /// for that sleeper to be scheduled: a convoy, one context switch per send, thousands of times
  /// slower (`RecursiveLockTests`).
  ///
  /// Why no wake-up is lost, though the giving back is a store and a load with no barrier
  /// between them (a processor may perform the load before its store is seen): the two sides are
  /// Dekker's. The holder stores 0 in the word, then loads `sleepers`; a waiter adds itself to
  /// `sleepers`, then reads the word (in the futex call, which sleeps only while it reads 1). If
  /// each side could miss the other's write, the holder would not wake the waiter and the waiter
  /// would sleep. So the side that waits, rare and slow anyway, pays for both:
  /// - on x86-64, after adding itself it makes every other thread of the process execute a full
  ///   barrier (`Futex.fenceOtherThreads`, the kernel's `membarrier`). A holder giving the lock
  ///   back at that moment has its store seen before the barrier ends, or performs its load after
  ///   it and sees the waiter; a holder that gives it back later loads after the barrier too. The
  ///   compiler keeps the load after the store: an acquiring-and-releasing fence between them
  ///   orders them for the compiler and is no instruction on x86-64. Where the kernel refuses the
  ///   barrier, a waiter's first sleep lasts at most 50 µs: only a holder that loaded `sleepers`
  ///   before the waiter's addition can miss it, and that holder's store, made before its load,
  ///   leaves the processor's store buffer within nanoseconds, so the waiter sees it when it
  ///   looks again (or sees a later holder, which loads after the addition and wakes a
  ///   sleeper). Whichever way, a sleep after the first lasts at most 10 ms, so that even a
  ///   wake-up lost against this reasoning costs a pause, never a hang. (Polling every 50 µs
  ///   instead would put a waiter to sleep dozens of times behind one preempted holder.)
  /// - on arm64, the store and the load are sequentially consistent (`stlr`, `ldar`), which that
  ///   processor never reorders, and so is the waiter's addition and its load of the word: in
  ///   the single order of those four, the holder loads after the waiter's addition, or the
  ///   waiter loads after the holder's store.
  ///
  /// Why `owner` tells a thread whether it holds the lock, with a relaxed load: only the thread
  /// that holds the word writes `owner`, its own id just after taking the word and 0 just before
  /// giving it back. A thread always reads its own last write, and no other thread ever writes
  /// its id; so it reads its id exactly while it holds the lock, and something else (0, or
  /// whichever id another holder wrote, stale or not) while it does not. `depth` is touched only
  /// by the thread that holds the lock, so the word's acquire and release hand it from holder to
  /// holder (the thread sanitizer sees them too: the word is an atomic it watches).
  ///
  /// Only where it was checked: Linux on x86-64 and arm64, with Swift 6.3 or later; elsewhere,
  /// and with `FLUX_PORTABLE`, the recursive `pthread_mutex_t` below.
  // `@unchecked Sendable`: `word` points to an atomic, and `owner` and `sleepers` are atomics,
  // all constant; `depth` is touched only by the thread that holds the word (see above).
  @usableFromInline
  package final class RecursiveLock: @unchecked Sendable {
    /// The lock word: 0 free, 1 held. Allocated once, never moved: the futex calls name it by its
    /// address.
    @usableFromInline
    let word: UnsafeMutablePointer<Atomic<UInt32>>
    /// The id (`pthread_self`) of the thread holding the lock, or 0.
    @usableFromInline
    let owner = Atomic<UInt>(0)
    /// How many threads may sleep waiting for the word, counted before they look at it for the
    /// last time before sleeping.
    @usableFromInline
    let sleepers = Atomic<UInt32>(0)
    /// Whether a sleeping waiter relies on being woken, with no 10 ms time-out behind it (about 16
    /// minutes instead): set by the tests that check that no wake-up is ever lost.
    package static let wakeUpsAreChecked = Atomic<Bool>(false)
    /// How many more times than once the holder has taken the lock. Guarded by the lock.
    @usableFromInline
    @exclusivity(unchecked) var depth = 0

    /// Creates an unlocked recursive lock.
    package init() {
      word = .allocate(capacity: 1)
      word.initialize(to: Atomic(0))
    }

    deinit {
      assert(owner.load(ordering: .relaxed) == 0, "Flux: a lock was destroyed while held.")
      word.deinitialize(count: 1)
      word.deallocate()
    }

    /// The calling thread's id, never 0.
    @inlinable
    static var currentThread: UInt { UInt(pthread_self()) }

    /// Acquires the lock, or takes it once more if this thread holds it already.
    ///
    /// A thread that must sleep until another holder gives it back says so first
    /// (``LockWaits``), so that two threads that each wait for a lock the other holds stop with a
    /// message that names the deadlock, instead of waiting forever.
    @inlinable
    package func lock() {
      let thread = Self.currentThread
      let holder = owner.load(ordering: .relaxed)
      if holder == thread {
        depth &+= 1
        return
      }
      // Free as far as `owner` tells: one compare-and-exchange. Held, or taken between the two
      // loads: wait.
      if _slowPath(holder != 0 || !takeFreeWord()) { return lockWaiting(thread) }
      owner.store(thread, ordering: .relaxed)
    }

    /// Takes the word from 0 (free) to 1 (held); `false` if it is held.
    @inlinable
    func takeFreeWord() -> Bool {
      word.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
    }

    /// Takes the lock that another thread holds (or held a moment ago): tries for a moment, as
    /// most holds are short; then registers the wait, stops with a message if it closes a cycle
    /// of waits, and sleeps until the lock is free (see the type's comment for why no wake-up is
    /// lost).
    @usableFromInline
    @inline(never)
    func lockWaiting(_ thread: UInt) {
      for _ in 0..<100 {
        if word.pointee.load(ordering: .relaxed) == 0 && takeFreeWord() {
          owner.store(thread, ordering: .relaxed)
          return
        }
      }
      LockWaits.shared.willWait(thread, for: self)
      sleepers.add(1, ordering: .sequentiallyConsistent)
      #if arch(x86_64)
        let fenced = Futex.fenceOtherThreads()
      #else
        let fenced = true
      #endif
      let longestSleep = Self.wakeUpsAreChecked.load(ordering: .relaxed) ? 1_000_000_000_000 : 10_000_000
      // Unfenced, the first sleep is short: a holder that missed this waiter gave the word back
      // before the waiter was counted, and its store is seen long before 50 µs (see the type's
      // comment). Every later holder sees the count and wakes a sleeper.
      var sleep = fenced ? longestSleep : 50_000
      while !(word.pointee.load(ordering: .sequentiallyConsistent) == 0 && takeFreeWord()) {
        Futex.wait(on: UnsafeMutableRawPointer(word), whileItHolds: 1, nanoseconds: sleep)
        sleep = longestSleep
      }
      sleepers.subtract(1, ordering: .relaxed)
      LockWaits.shared.didWait(thread)
      owner.store(thread, ordering: .relaxed)
    }

    /// Releases one hold of the lock.
    @inlinable
    package func unlock() {
      assert(
        owner.load(ordering: .relaxed) == Self.currentThread,
        "Flux: a recursive lock was released by a thread that does not hold it.")
      if depth != 0 {
        depth &-= 1
        return
      }
      owner.store(0, ordering: .releasing)
      #if arch(x86_64)
        word.pointee.store(0, ordering: .releasing)
        // For the compiler only: the load stays after the store (no instruction on x86-64).
        atomicMemoryFence(ordering: .acquiringAndReleasing)
        if _slowPath(sleepers.load(ordering: .relaxed) != 0) { wakeOne() }
      #else
        word.pointee.store(0, ordering: .sequentiallyConsistent)
        if _slowPath(sleepers.load(ordering: .sequentiallyConsistent) != 0) { wakeOne() }
      #endif
    }

    /// Wakes one thread that may sleep waiting for the lock, just given back. The caller holds a
    /// reference to this lock, so its word is still there.
    @usableFromInline
    @inline(never)
    func wakeOne() {
      Futex.wake(UnsafeMutableRawPointer(word))
    }

    /// Takes the lock if it is free or this thread holds it already; `false`, without waiting,
    /// if another thread holds it.
    @inlinable
    package func tryLock() -> Bool {
      let thread = Self.currentThread
      if owner.load(ordering: .relaxed) == thread {
        depth &+= 1
        return true
      }
      guard takeFreeWord() else { return false }
      owner.store(thread, ordering: .relaxed)
      return true
    }
  }
#else
  /// A lock that the thread holding it may take again: a recursive `pthread_mutex_t` (on Darwin,
  /// on Linux with `FLUX_PORTABLE`, before Swift 6.3 or on other processors).
  ///
  /// Flux uses it where user code runs while the lock is held (a sink's delivery), so that the
  /// same thread can come back in; what a reentrant call then does is decided explicitly by the
  /// owner of the lock (queue, never nest), not by the lock.
  ///
  /// `lock()` and `unlock()` are `@inlinable`: a sink's `send` inlines into its caller, and an
  /// extra call per lock operation shows in the benchmarks.
  // `@unchecked Sendable`: its one property is constant, and the mutex it points to is touched
  // only through the pthread calls, which are thread-safe.
  @usableFromInline
  package final class RecursiveLock: @unchecked Sendable {
    // Allocated once, never moved.
    @usableFromInline
    let word: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates an unlocked recursive lock.
    package init() {
      word = .allocate(capacity: 1)
      word.initialize(to: pthread_mutex_t())
      var attributes = pthread_mutexattr_t()
      pthread_mutexattr_init(&attributes)
      pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
      let status = pthread_mutex_init(word, &attributes)
      pthread_mutexattr_destroy(&attributes)
      guard status == 0 else { fatalError("Flux: pthread_mutex_init failed with status \(status).") }
    }

    deinit {
      let status = pthread_mutex_destroy(word)
      assert(status == 0, "Flux: a lock was destroyed while held (status \(status)).")
      word.deinitialize(count: 1)
      word.deallocate()
    }

    /// Acquires the lock, or takes it once more if this thread holds it already.
    @inlinable
    package func lock() {
      let status = pthread_mutex_lock(word)
      assert(status == 0, "Flux: pthread_mutex_lock failed with status \(status).")
    }

    /// Releases one hold of the lock.
    @inlinable
    package func unlock() {
      let status = pthread_mutex_unlock(word)
      assert(status == 0, "Flux: pthread_mutex_unlock failed with status \(status).")
    }

    /// Takes the lock if it is free or this thread holds it already; `false`, without waiting,
    /// if another thread holds it.
    @inlinable
    package func tryLock() -> Bool {
      pthread_mutex_trylock(word) == 0
    }
  }
#endif

/// A lock whose holder may hand over what its locked section took out, to be let go of after
/// the unlock.
@usableFromInline
package protocol ReleasingUnlock: AnyObject {
  /// Releases (one hold of) the lock.
  func unlock()
}

extension Lock: ReleasingUnlock {}
extension RecursiveLock: ReleasingUnlock {}

extension ReleasingUnlock {
  /// Releases the lock (one hold of a ``RecursiveLock``), then lets go of `taken`: what the
  /// locked section took out (closures, user objects), whose deinit may run user code and so must
  /// run after the lock (invariant 16). On a thread that holds a recursive lock more than once,
  /// `taken` goes inside the outer holds.
  ///
  /// `taken` is consumed here and used after the unlock, so no build mode frees it sooner: the
  /// optimizer may end a value's life at its last use, and `_ = taken` is no use at all.
  @inlinable
  package func unlock<Taken>(releasing taken: consuming Taken) {
    unlock()
    withExtendedLifetime(taken) {}
  }

  /// ``unlock(releasing:)`` for what is most often nothing: the common `nil` costs no release.
  @inlinable
  package func unlock<Taken>(releasing taken: consuming Taken?) {
    switch consume taken {
    case .none: unlock()
    case .some(let taken): unlock(releasing: taken)
    }
  }
}
