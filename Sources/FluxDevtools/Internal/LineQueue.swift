import Dispatch
import Foundation

/// The lines of an ``ActionLog`` between the end of their action and their write: a pure state
/// machine, which the log drives under its lock and acts on after it.
///
/// A committing thread offers its line (``offer(_:at:)``): it joins the queue, in the order the
/// actions ended, unless the queue holds ``limit`` lines, and then it is dropped and counted.
/// The drainer (one at a time, on the log's queue) takes everything queued (``take()``), encodes
/// and writes it outside the lock, says so (``wrote(_:)``) and takes again. A run of dropped
/// lines becomes one line (``DroppedLines``) at the end of the batch the drainer takes next:
/// every line queued then ended before the drops (the queue was full), every line offered after
/// ended after them.
///
/// States (``Drainer``):
/// - idle: nothing queued, no drainer. The first line offered starts one (the caller wakes a
///   thread: several microseconds).
/// - draining: a drainer runs, or was started; lines offered now only join the queue.
/// - lingering: a take found nothing, and the drainer ended, but a check comes after a nap
///   (``check(_:)``), nap after nap, each twice as long as the one before up to
///   ``Linger/longestNap``, until they add up to ``Linger/duration``. A line offered now only
///   joins the queue (no thread is woken: a fraction of a microsecond), and the next check
///   starts the drainer; so does ``waiter()``, and an offer that finds ``wakeCount`` lines
///   queued. When the naps are over and nothing came, idle. Each linger has a generation of its
///   own, so a check of an earlier one does nothing.
///
/// Waiters of ``flush()`` wait for the count of lines accepted when they came; a dropped run
/// counts as one line from its first drop, written with the batch that holds it.
struct LineQueue {
  /// One entry of the queue.
  enum Entry {
    /// A line, and when its action ended.
    case line(any PendingLine, Date)
    case dropped(DroppedLines)
  }

  /// Who writes the queued lines: see the states above.
  enum Drainer: Equatable {
    case idle
    case draining
    /// Waiting for a check of `generation`, after a nap of `nap` nanoseconds, having napped
    /// `napped` nanoseconds before it.
    case lingering(generation: UInt64, nap: UInt64, napped: UInt64)
  }

  /// The nap before a check: the log's queue runs ``check(_:)`` with `generation` after
  /// `nanoseconds`.
  struct Nap: Equatable {
    let generation: UInt64
    let nanoseconds: UInt64
  }

  /// What a check says to do.
  enum Next: Equatable {
    /// Nothing: the linger it checks is over (a line came, or the log settled).
    case nothing
    /// Run the drainer: lines came.
    case drain
    /// Check again after this nap.
    case nap(Nap)
  }

  /// How long a drainer lingers: the naps that follow the take that found nothing.
  enum Linger {
    /// The first nap: 100 µs.
    static let firstNap: UInt64 = 100_000
    /// The longest nap, and so the longest a line offered to a lingering queue waits before
    /// its write starts: 20 ms.
    static let longestNap: UInt64 = 20_000_000
    /// How long the naps add up to before the queue goes idle: 1 s (57 checks). Waking a
    /// thread costs a committing thread tens of microseconds after a pause (`log-curve`, "after
    /// idle"): so an app pays it at most once a second, however its actions come.
    static let duration: UInt64 = 1_000_000_000
  }

  /// The most lines that wait; more are dropped.
  let limit: Int
  /// How many queued lines make an offer to a lingering queue start the drainer at once: half
  /// the limit, at most 256, so that a burst that begins during a nap is not dropped.
  let wakeCount: Int
  /// The lines queued, not yet taken by the drainer.
  private var entries: [Entry] = []
  /// The run of lines dropped since the queue was last full, not yet taken.
  private var dropped: DroppedLines?
  /// Who writes the lines queued.
  private(set) var drainer = Drainer.idle
  /// The generation of the latest linger.
  private var generation: UInt64 = 0
  /// Lines accepted (a dropped run counts as one line): the end a new waiter waits for.
  private var accepted: UInt64 = 0
  /// Lines written.
  private var written: UInt64 = 0
  /// Who waits for the lines before `end` to be written, by `end`.
  private var waiters: [(end: UInt64, semaphore: DispatchSemaphore)] = []

  init(limit: Int) {
    self.limit = max(1, limit)
    self.wakeCount = max(1, min(256, self.limit / 2))
  }

  /// Offers the line of an action that ended at `date` (taken under the same lock as the offer,
  /// so that times follow the order of the lines). Returns whether the caller must start a
  /// drainer.
  mutating func offer(_ line: any PendingLine, at date: Date) -> Bool {
    if entries.count >= limit {
      // Full: a drainer runs, since `wakeCount <= limit` started one.
      if dropped == nil {
        dropped = DroppedLines(first: line, at: date, limit: limit)
        accepted &+= 1
      } else {
        dropped?.add(line, at: date)
      }
      return false
    }
    entries.append(.line(line, date))
    accepted &+= 1
    switch drainer {
    case .draining:
      return false
    case .idle:
      drainer = .draining
      return true
    case .lingering:
      guard entries.count >= wakeCount else { return false }
      drainer = .draining
      return true
    }
  }

  /// The drainer takes everything queued, with the line of a dropped run at its end. An empty
  /// batch ends the drainer, and the queue lingers: the caller schedules the check after the
  /// nap returned.
  mutating func take() -> (batch: [Entry], nap: Nap?) {
    var batch: [Entry] = []
    swap(&batch, &entries)
    if let run = dropped {
      batch.append(.dropped(run))
      dropped = nil
    }
    guard batch.isEmpty else { return (batch, nil) }
    generation &+= 1
    drainer = .lingering(generation: generation, nap: Linger.firstNap, napped: 0)
    return ([], Nap(generation: generation, nanoseconds: Linger.firstNap))
  }

  /// A check of the linger `nap` names, after its nap.
  mutating func check(_ nap: Nap) -> Next {
    guard case .lingering(nap.generation, let length, let napped) = drainer else { return .nothing }
    if !entries.isEmpty || dropped != nil {
      drainer = .draining
      return .drain
    }
    let total = napped &+ length
    guard total < Linger.duration else {
      drainer = .idle
      return .nothing
    }
    let next = min(length &* 2, Linger.longestNap)
    drainer = .lingering(generation: nap.generation, nap: next, napped: total)
    return .nap(Nap(generation: nap.generation, nanoseconds: next))
  }

  /// Ends a linger now: the queue goes idle, or, if lines came, the caller must start a
  /// drainer (returns `true`). Nothing while a drainer runs, or none lingers.
  mutating func endLinger() -> Bool {
    guard case .lingering = drainer else { return false }
    if entries.isEmpty && dropped == nil {
      drainer = .idle
      return false
    }
    drainer = .draining
    return true
  }

  /// The drainer wrote `count` lines. Returns the waiters to wake: those whose lines are all
  /// written.
  mutating func wrote(_ count: Int) -> [DispatchSemaphore] {
    written &+= UInt64(count)
    let woken = waiters.prefix { $0.end <= written }
    waiters.removeFirst(woken.count)
    return woken.map(\.semaphore)
  }

  /// What to wait on until every line accepted so far is written (`nil` if it is), and whether
  /// the caller must start a drainer for them (the queue lingers).
  mutating func waiter() -> (semaphore: DispatchSemaphore?, startsDrainer: Bool) {
    guard written < accepted else { return (nil, false) }
    let semaphore = DispatchSemaphore(value: 0)
    waiters.append((accepted, semaphore))
    return (semaphore, endLinger())
  }
}
