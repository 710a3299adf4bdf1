#if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
  import Glibc

  /// The two futex operations under ``RecursiveLock``: sleep while a 32-bit word holds a value,
  /// and wake one sleeper.
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

    /// The C library's `syscall`, or `nil` in a fully static executable.
    private static let call: Call? = {
      // A null handle is `RTLD_DEFAULT`: the process's own symbols, the C library's included.
      dlsym(nil, "syscall").map { unsafeBitCast($0, to: Call.self) }
    }()

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

    /// Sleeps until woken, if the 32-bit word at `address` holds `value`; returns at once if it
    /// does not. May also return spuriously (a signal, or no futex to call): the caller checks
    /// the word again.
    static func wait(on address: UnsafeMutableRawPointer, whileItHolds value: UInt32) {
      guard let call else {
        usleep(50)
        return
      }
      if call(number, address, waitPrivate, value, nil) == -1 {
        let cause = errno
        // EAGAIN: the word changed before the sleep; EINTR: a signal. Anything else is a bug.
        assert(cause == EAGAIN || cause == EINTR, "Flux: futex wait failed with errno \(cause).")
      }
    }

    /// Wakes one thread sleeping on the word at `address`, if any.
    static func wake(_ address: UnsafeMutableRawPointer) {
      guard let call else { return }  // the waiters poll
      let woken = call(number, address, wakePrivate, 1, nil)
      assert(woken >= 0, "Flux: futex wake failed with errno \(errno).")
    }
  }
#endif
