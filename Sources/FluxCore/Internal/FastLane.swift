#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

/// A way past a store's lock for the commonest dispatch: an ``Executor/immediate`` store that
/// is idle, whose middleware (if any) all keeps the default interception, gets its action
/// committed by the dispatching thread after one atomic compare-and-exchange, and ends it with
/// another. The locked path takes a lock round trip for each.
///
/// The lane is a second, small state machine beside ``StoreStateMachine``; the two agree
/// through one rule: **the lane is open only while the machine is idle and eligible** (not
/// freed, on `.immediate`, no intercepting middleware), and a claimed lane is a drain the
/// machine does not know about yet. Every locked section of the store starts by closing the
/// lane (``close()``), so that the machine it then works on is the whole truth: a running fast
/// commit is handed over to the machine as its drain (``Closing/handedOver``; the machine
/// adopts it, ``StoreStateMachine/adoptFastCommit()``), and the claimant, finding its lane
/// taken when it ends, goes on as that drain through the lock. Locked sections that leave the
/// machine idle and eligible reopen the lane (``open()``).
///
/// | state ↓ / event →  | `claim` (any thread) | `finish` (the claimant) | `close` (under the lock)        | `open` (under the lock, machine idle) |
/// |--------------------|----------------------|-------------------------|---------------------------------|---------------------------------------|
/// | `open`             | → `claimed`          | —                       | → `closed`                      | (cannot happen: the section closed it) |
/// | `claimed`          | refused              | → `open`                | → `handedOver`; machine adopts   | (cannot happen: machine not idle)      |
/// | `closed`           | refused              | —                       | stays                           | → `open`                              |
/// | `handedOver`       | refused              | refused: drain instead  | stays                           | → `open` (the claimant's drain ended) |
///
/// A locked section that leaves the machine idle but not eligible (freed, or an intercepting
/// middleware came) shuts the lane instead (``shut()``: `closed` or `handedOver` → `closed`).
///
/// `claim` and `finish` take no lock. `close` and `open` run with the store's lock held, so
/// they never race each other; `close` can race `claim` and `finish`, which is why every
/// transition out of `open` or `claimed` is a compare-and-exchange.
///
/// Memory ordering: `claim` acquires and `finish` and `open` release, so a fast commit sees
/// everything before the previous commit ended, through the lane or through the lock; `close`
/// acquires too, so a locked section that closes an `open` lane sees the last fast commit.
///
/// Only on Linux, where `Synchronization` is always there. On Apple systems (`Atomic` needs
/// macOS 15) the lane stays closed and every dispatch takes the lock.
@usableFromInline
struct FastLane: ~Copyable {
  @usableFromInline
  enum Closing: Equatable {
    /// The lane was open, or closed already: the machine is the whole truth.
    case closed
    /// A fast commit was running: the machine now counts it as its drain.
    case handedOver
  }

  @usableFromInline
  static var open: UInt8 { 0 }
  @usableFromInline
  static var claimed: UInt8 { 1 }
  @usableFromInline
  static var closed: UInt8 { 2 }
  @usableFromInline
  static var handedOver: UInt8 { 3 }

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    @usableFromInline
    let word: Atomic<UInt8>

    init() {
      word = Atomic(Self.closed)
    }

    /// Whether this platform has a lane at all.
    @inlinable
    static var exists: Bool { true }

    /// `open → claimed`: the caller runs a commit as the store's drain, without its lock.
    @inlinable
    func claim() -> Bool {
      // A plain load first: a closed lane (a store with intercepting middleware, a drain
      // running) costs no locked instruction to refuse.
      word.load(ordering: .relaxed) == Self.open
        && word.compareExchange(expected: Self.open, desired: Self.claimed, ordering: .acquiring).exchanged
    }

    /// `claimed → open`, after the claimant's commit. `false`: the lane was handed over
    /// meanwhile, and the claimant must go on as the machine's drain.
    @inlinable
    func finish() -> Bool {
      word.compareExchange(expected: Self.claimed, desired: Self.open, ordering: .releasing).exchanged
    }

    /// Closes the lane, with the store's lock held.
    @inlinable
    func close() -> Closing {
      var current = word.load(ordering: .acquiring)
      while true {
        let next: UInt8
        switch current {
        case Self.open: next = Self.closed
        case Self.claimed: next = Self.handedOver
        default: return .closed
        }
        let (exchanged, seen) = word.compareExchange(
          expected: current, desired: next, ordering: .acquiringAndReleasing)
        if exchanged { return next == Self.handedOver ? .handedOver : .closed }
        current = seen
      }
    }

    /// Opens the lane, with the store's lock held and its machine idle and eligible (so nobody
    /// has claimed it).
    @inlinable
    func open() {
      word.store(Self.open, ordering: .releasing)
    }

    /// Keeps the lane closed, with the store's lock held and its machine idle but not
    /// eligible. (A store that is never eligible, on `.queue` say, only reads the word.)
    @inlinable
    func shut() {
      if word.load(ordering: .relaxed) != Self.closed { word.store(Self.closed, ordering: .releasing) }
    }

    /// Reads the word, to bring it into the cache ahead of a claim.
    @inlinable
    func touch() {
      _ = word.load(ordering: .relaxed)
    }

    /// The lane's state, for tests.
    var state: UInt8 { word.load(ordering: .relaxed) }
  #else
    @inlinable
    func touch() {}

    init() {}

    @inlinable
    static var exists: Bool { false }

    @inlinable
    func claim() -> Bool { false }

    @inlinable
    func finish() -> Bool { false }

    @inlinable
    func close() -> Closing { .closed }

    @inlinable
    func open() {}

    @inlinable
    func shut() {}

    var state: UInt8 { Self.closed }
  #endif
}
