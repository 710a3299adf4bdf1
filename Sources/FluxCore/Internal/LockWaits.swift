#if os(Linux) && (arch(x86_64) || arch(arm64)) && canImport(Synchronization) && !FLUX_PORTABLE && compiler(>=6.3)
  import Glibc

  /// The threads that wait for a ``RecursiveLock`` held by another thread, and which lock each
  /// waits for: a thread about to wait says so here first, so that the wait that would close a
  /// cycle (two threads, each waiting for a lock the other holds) stops the program with a
  /// message that names it.
  ///
  /// Without this, the threads of the cycle would sleep forever, with nothing to say why. The
  /// usual cause is rule 3's deadlock: observers on two threads that send into each
  /// other's sinks, or set each other's variables, while their own delivery runs.
  ///
  /// Why the last thread to close a cycle always sees it: a thread registers here, under `lock`,
  /// before it can block on a ``RecursiveLock`` (`lockWaiting`); it took every lock it holds
  /// earlier, and stored its id in each one's `owner` right after taking it. So when the last
  /// thread of a cycle registers, every other thread of the cycle has registered (under `lock`,
  /// which orders their earlier `owner` stores before this thread's loads), and the chain from
  /// the lock it waits for, holder by holder, comes back to itself. A chain that meets a lock
  /// with no holder, or a holder that does not wait, is no cycle: that holder will go on.
  ///
  /// A registered lock is alive: its waiting thread is inside its `lock()` until it is
  /// unregistered, under `lock`, where the chain is followed. Only threads that wait pay for
  /// this: a lock taken without waiting never comes here.
  ///
  /// A child process forked from a process whose threads wait starts with none of them: only
  /// the forking thread goes on, and it waits for nothing (it is running `fork`). So the child
  /// starts with no waits, and never takes one of the parent's for a wait of its own thread that
  /// was given the same id (the C library reuses the parent's thread stacks, and with them the
  /// ids). `lock` is held across the fork, so that the child's copy is neither held by a thread
  /// it does not have nor half-changed.
  // `@unchecked Sendable`: `waits` is read and written only under `lock`.
  @usableFromInline
  final class LockWaits: @unchecked Sendable {
    @usableFromInline
    static let shared: LockWaits = {
      let waits = LockWaits()
      // Registered once, with the instance made: no handler runs before `shared` exists.
      let status = pthread_atfork(
        { LockWaits.shared.lock.lock() },
        { LockWaits.shared.lock.unlock() },
        {
          let shared = LockWaits.shared
          shared.waits.removeAll()
          shared.lock.unlock()
        })
      guard status == 0 else { fatalError("Flux: pthread_atfork failed with status \(status).") }
      return waits
    }()

    private let lock = Lock()
    /// Each waiting thread (`pthread_self`) and the lock it waits for. Guarded by `lock`.
    private var waits: [(thread: UInt, lock: Unmanaged<RecursiveLock>)] = []

    /// Registers that `thread` is about to wait for `target`; stops the program if that wait
    /// would never end because the holder of `target` waits, directly or through others, for a
    /// lock that `thread` holds.
    @usableFromInline
    func willWait(_ thread: UInt, for target: RecursiveLock) {
      lock.lock()
      var chain: [UInt] = []
      var next = target
      while chain.count <= waits.count {
        let holder = next.owner.load(ordering: .acquiring)
        if holder == thread {
          lock.unlock()
          Self.deadlock(chain: chain)
        }
        guard holder != 0, let wait = waits.first(where: { $0.thread == holder }) else { break }
        chain.append(holder)
        next = wait.lock.takeUnretainedValue()
      }
      waits.append((thread, Unmanaged.passUnretained(target)))
      lock.unlock()
    }

    /// Unregisters the wait of `thread`, which holds the lock now.
    @usableFromInline
    func didWait(_ thread: UInt) {
      lock.lock()
      if let index = waits.firstIndex(where: { $0.thread == thread }) {
        waits.swapAt(index, waits.count - 1)
        waits.removeLast()
      }
      lock.unlock()
    }

    private static func deadlock(chain: [UInt]) -> Never {
      let others =
        chain.count == 1 ? "another thread, which waits" : "\(chain.count) other threads, the last of which waits"
      fatalError(
        "Flux: deadlock: this thread waits for a delivery that \(others) for one this thread is running. "
          + "Observers on two threads send into each other's sinks or set each other's variables (rule 3); "
          + "deliver one side on an executor with observe(on:), or send after the delivery.")
    }
  }
#endif
