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

  /// Releases the lock, then lets go of `taken`: what the locked section took out (closures,
  /// user objects), whose deinit may run user code and so must run after the lock (invariant
  /// 16).
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

/// A lock that the thread holding it may take again: a recursive `pthread_mutex_t`.
///
/// Flux uses it where user code runs while the lock is held (a sink's delivery), so that the
/// same thread can come back in; what a reentrant call then does is decided explicitly by the
/// owner of the lock (queue, never nest), not by the lock.
///
/// `lock()` and `unlock()` are `@inlinable`: a sink's `send` inlines into its caller, and an
/// extra call per lock operation shows in the benchmarks.
@usableFromInline
package final class RecursiveLock: @unchecked Sendable {
  // Allocated once, only ever touched through the pthread calls.
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

  /// Releases one hold of the lock, then lets go of `taken`, like ``Lock/unlock(releasing:)``.
  ///
  /// `taken` goes after this one hold: on a thread that holds the lock more than once, it goes
  /// inside the outer holds.
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

  /// Takes the lock if it is free or this thread holds it already; `false`, without waiting,
  /// if another thread holds it.
  @inlinable
  package func tryLock() -> Bool {
    pthread_mutex_trylock(word) == 0
  }
}
