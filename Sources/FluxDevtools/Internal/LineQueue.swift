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
///   thread: several microseconds, tens after a pause).
/// - draining: a drainer runs, or was started; lines offered now only join the queue.
/// - lingering: a take found nothing, and the drainer ended, but checks come after naps
///   (``check(_:at:)``), each twice as long as the one before, at most ``lingerChecks`` of them
///   (``Linger``). A line offered now only joins the queue (no thread is woken: a fraction of a
///   microsecond), and the next check starts the drainer; so do ``waiter()``, and an offer that
///   finds ``wakeCount`` lines queued. When the checks are over and nothing came, idle. Each
///   linger has a generation of its own, so a check of an earlier one does nothing.
///
/// A check wakes the log's thread as an offer to an idle queue would, so a linger pays only when
/// lines come while it lasts. How many checks it may take adapts: a linger that ends with nothing
/// halves them for the next (down to none: the queue goes idle as soon as it runs out), and a line
/// offered to an idle queue within what a whole linger covers, counted from when the drainer ran
/// out (not from the end of a shorter linger), gives them all back. Actions that
/// come often are caught by lingers; actions a second apart soon wake the thread each, and lingers
/// cost them nothing.
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
    /// Waiting for a check of `generation`, after a nap of `nap` nanoseconds; `left` checks
    /// come after it.
    case lingering(generation: UInt64, nap: UInt64, left: Int)
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
    /// The first nap: 500 µs.
    static let firstNap: UInt64 = 500_000
    /// The most checks of a linger: after naps of 0.5, 1, 2, 4, 8 and 16 ms, 31.5 ms in all. The
    /// last nap is the longest a line offered to a lingering queue waits before its write starts.
    static let mostChecks = 6
    /// What a linger of ``mostChecks`` covers: an offer to an idle queue that comes sooner after
    /// the drainer ran out gives a linger all its checks back.
    static let reach: TimeInterval = 0.0315
  }

  /// The most lines that wait; more are dropped.
  let limit: Int
  /// How many queued lines make an offer to a lingering queue start the drainer at once: a
  /// quarter of the limit, at most 256, so that a burst that begins during a nap is not dropped.
  let wakeCount: Int
  /// Whether the queue lingers at all: not for a flight recorder, whose lines come with the
  /// ``waiter()`` that writes them.
  let lingers: Bool
  /// How many checks the next linger may take: adapts (see above).
  private(set) var lingerChecks: Int
  /// When the drainer last ran out of lines, if the queue is idle since: a whole linger would
  /// have caught a line offered within ``Linger/reach`` of it. `nil` while a drainer runs or
  /// lingers, and after ``endLinger()``.
  private var idleSince: Date?
  /// When the drainer ran out of lines, while it lingers.
  private var ranOut: Date?
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

  init(limit: Int, lingers: Bool = true) {
    self.limit = max(1, limit)
    self.wakeCount = max(1, min(256, self.limit / 4))
    self.lingers = lingers
    self.lingerChecks = lingers ? Linger.mostChecks : 0
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
      if lingers, let idleSince, date.timeIntervalSince(idleSince) < Linger.reach {
        lingerChecks = Linger.mostChecks  // a whole linger would have caught this line
      }
      idleSince = nil
      drainer = .draining
      return true
    case .lingering:
      guard entries.count >= wakeCount else { return false }
      drainer = .draining
      ranOut = nil
      return true
    }
  }

  /// The drainer takes everything queued, with the line of a dropped run at its end, at `now`.
  /// An empty batch ends the drainer, and the queue lingers (the caller schedules the check
  /// after the nap returned), or goes idle if its lingers have no checks left.
  mutating func take(at now: Date) -> (batch: [Entry], nap: Nap?) {
    var batch: [Entry] = []
    swap(&batch, &entries)
    if let run = dropped {
      batch.append(.dropped(run))
      dropped = nil
    }
    guard batch.isEmpty else { return (batch, nil) }
    guard lingerChecks > 0 else {
      drainer = .idle
      idleSince = now
      return ([], nil)
    }
    generation &+= 1
    ranOut = now
    drainer = .lingering(generation: generation, nap: Linger.firstNap, left: lingerChecks - 1)
    return ([], Nap(generation: generation, nanoseconds: Linger.firstNap))
  }

  /// A check of the linger `nap` names, after its nap, at `now`.
  mutating func check(_ nap: Nap, at now: Date) -> Next {
    guard case .lingering(nap.generation, let length, let left) = drainer else { return .nothing }
    if !entries.isEmpty || dropped != nil {
      drainer = .draining
      ranOut = nil
      return .drain
    }
    guard left > 0 else {
      // A whole linger, for nothing: the next one takes half as many checks.
      // A line that comes later is measured from when the drainer ran out, as a whole linger
      // would have waited from then: from the end of this one, lines spaced past a whole linger
      // would give back every check they cost, and never wake the thread for less.
      lingerChecks /= 2
      drainer = .idle
      idleSince = ranOut ?? now
      ranOut = nil
      return .nothing
    }
    let next = length &* 2
    drainer = .lingering(generation: nap.generation, nap: next, left: left - 1)
    return .nap(Nap(generation: nap.generation, nanoseconds: next))
  }

  /// Ends a linger now: the queue goes idle, or, if lines came, the caller must start a
  /// drainer (returns `true`). Nothing while a drainer runs, or none lingers.
  mutating func endLinger() -> Bool {
    guard case .lingering = drainer else { return false }
    ranOut = nil
    if entries.isEmpty && dropped == nil {
      drainer = .idle
      idleSince = nil
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
