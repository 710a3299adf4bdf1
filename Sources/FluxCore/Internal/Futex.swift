#if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
  import Glibc
  import Synchronization

  /// The system calls under ``RecursiveLock``: the futex's two operations (sleep while a 32-bit
  /// word holds a value, wake one sleeper), and the barrier that a waiter makes every other
  /// thread execute.
  ///
  /// The C library offers them only through `syscall`, which takes a variable number of
  /// arguments and so is not imported into Swift. It is looked up once and called through a C
  /// function type with the arguments these operations take: on Linux (x86-64 and arm64) a
  /// variadic function receives its integer and pointer arguments where a fixed one does, and
  /// glibc's and musl's `syscall` only move them into the system call's registers.
  ///
  /// A fully static executable (`-static-executable`) has no symbols to look up: there a wait
  /// sleeps for a moment (about 50 µs) instead, and the waiting thread checks the word again, so
  /// the lock still works, only with a slower hand-over when it is contended.
  enum Futex {
    /// `syscall(number, address, operation, value, timeout)`.
    private typealias Call = @convention(c) (CLong, UnsafeMutableRawPointer, CInt, UInt32, UnsafeRawPointer?) -> CLong

    /// The address of the C library's `syscall`: 0 not looked up yet, 1 none (a fully static
    /// executable).
    ///
    /// An atomic that any thread may fill in, not a constant computed once, for the reason given
    /// at ``barrierState``: a process forked while a thread looked it up must not start with a
    /// once-lock held by a thread it does not have. Looking it up twice finds the same address.
    private static let callAddress = Atomic<UInt>(0)

    /// The C library's `syscall`, or `nil` in a fully static executable.
    private static var call: Call? {
      var address = callAddress.load(ordering: .relaxed)
      if address == 0 {
        // A null handle is `RTLD_DEFAULT`: the process's own symbols, the C library's included.
        address = dlsym(nil, "syscall").map { UInt(bitPattern: $0) } ?? 1
        callAddress.store(address, ordering: .relaxed)
      }
      guard address != 1, let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
      return unsafeBitCast(pointer, to: Call.self)
    }

    /// The futex system call's number (`SYS_futex`, which Swift does not import).
    private static var number: CLong {
      #if arch(x86_64)
        202
      #else
        98  // arm64
      #endif
    }

    /// `FUTEX_WAIT | FUTEX_PRIVATE_FLAG`: the word belongs to this process only.
    private static let waitPrivate: CInt = 0 | 128
    /// `FUTEX_WAKE | FUTEX_PRIVATE_FLAG`.
    private static let wakePrivate: CInt = 1 | 128

    /// Sleeps until woken, if the 32-bit word at `address` holds `value`, for at most
    /// `nanoseconds`; returns at once if it does not. May also return spuriously (a signal, the
    /// time out, or no futex to call): the caller checks the word again.
    static func wait(on address: UnsafeMutableRawPointer, whileItHolds value: UInt32, nanoseconds: Int) {
      guard let call else {
        usleep(50)
        return
      }
      var timeout = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
      if call(number, address, waitPrivate, value, &timeout) == -1 {
        let cause = errno
        // EAGAIN: the word changed before the sleep; EINTR: a signal; ETIMEDOUT: the time is up.
        // Anything else is a bug.
        assert(
          cause == EAGAIN || cause == EINTR || cause == ETIMEDOUT, "Flux: futex wait failed with errno \(cause).")
      }
    }

    /// `membarrier(command, flags, cpu)`.
    private typealias BarrierCall = @convention(c) (CLong, CInt, CUnsignedInt, CInt) -> CLong

    /// The membarrier system call's number (`SYS_membarrier`).
    private static var barrierNumber: CLong {
      #if arch(x86_64)
        324
      #else
        283  // arm64
      #endif
    }

    /// Whether this process has registered for `MEMBARRIER_CMD_PRIVATE_EXPEDITED` (16 registers,
    /// once per process): 0 not asked yet, 1 registered, 2 refused.
    ///
    /// An atomic that any waiting thread may fill in, not a constant computed once: registering
    /// takes an interrupt to every processor, and a `static let` holds its once-lock across its
    /// initializer. A process forked while a thread registered would start with that lock held
    /// by a thread it does not have, and its first wait would never end. Registering twice does
    /// no harm: the kernel keeps the first. (The atomic's own initial value is a constant, set
    /// before any thread reads it.)
    private static let barrierState = Atomic<UInt8>(0)

    /// Makes every other running thread of this process execute a full memory barrier before
    /// this returns (`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`); a thread that is not
    /// running executes one before it runs again. `false` when the kernel refuses it (no
    /// `membarrier`, a filter that forbids it, or a forked child that has not registered): the
    /// caller then must not rely on it.
    ///
    /// Microseconds: an interrupt to each processor that runs a thread of this process.
    static func fenceOtherThreads() -> Bool {
      guard let call else { return false }
      let barrier = unsafeBitCast(call, to: BarrierCall.self)
      var state = barrierState.load(ordering: .relaxed)
      if state == 0 {
        state = barrier(barrierNumber, 16, 0, 0) == 0 ? 1 : 2
        barrierState.store(state, ordering: .relaxed)
      }
      return state == 1 && barrier(barrierNumber, 8, 0, 0) == 0
    }

    /// Wakes one thread sleeping on the word at `address`, if any.
    static func wake(_ address: UnsafeMutableRawPointer) {
      guard let call else { return }  // the waiters poll
      let woken = call(number, address, wakePrivate, 1, nil)
      assert(woken >= 0, "Flux: futex wake failed with errno \(errno).")
    }
  }
#endif
