import Dispatch
import Foundation

/// The lines of an ``ActionLog`` between the end of their action and their write: a pure state
/// machine, which the log drives under its lock and acts on after it.
///
/// A committing thread offers its line (``offer(_:)``): it joins the queue, in the order the
/// actions ended, unless the queue holds ``limit`` lines, and then it is dropped and counted.
/// The first line offered to an idle queue starts the drainer (one at a time, on the log's
/// queue), which takes everything queued (``take()``), encodes and writes it outside the lock,
/// says so (``wrote(_:)``) and takes again, until nothing is left. A run of dropped lines
/// becomes one line (``DroppedLines``) at the end of the batch the drainer takes next: every
/// line queued then ended before the drops (the queue was full), every line offered after ended
/// after them.
///
/// States: idle (nothing queued, no drainer) → draining (a drainer runs; lines may be queued)
/// → idle, when a take finds nothing. Waiters of ``flush()`` wait for the count of lines
/// accepted when they came; a dropped run counts as one line from its first drop, written
/// with the batch that holds it.
struct LineQueue {
  /// One entry of the queue.
  enum Entry {
    /// A line, and when its action ended.
    case line(any PendingLine, Date)
    case dropped(DroppedLines)
  }

  /// The most lines that wait; more are dropped.
  let limit: Int
  /// The lines queued, not yet taken by the drainer.
  private var entries: [Entry] = []
  /// The run of lines dropped since the queue was last full, not yet taken.
  private var dropped: DroppedLines?
  /// Whether a drainer runs (from the offer that started it to the take that finds nothing).
  private(set) var isDraining = false
  /// Lines accepted (a dropped run counts as one line): the end a new waiter waits for.
  private var accepted: UInt64 = 0
  /// Lines written.
  private var written: UInt64 = 0
  /// Who waits for the lines before `end` to be written, by `end`.
  private var waiters: [(end: UInt64, semaphore: DispatchSemaphore)] = []

  init(limit: Int) {
    self.limit = max(1, limit)
  }

  /// Offers the line of an action that ended at `date` (taken under the same lock as the offer,
  /// so that times follow the order of the lines). Returns whether the caller must start a
  /// drainer.
  mutating func offer(_ line: any PendingLine, at date: Date) -> Bool {
    if entries.count >= limit {
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
    if isDraining { return false }
    isDraining = true
    return true
  }

  /// The drainer takes everything queued, with the line of a dropped run at its end. An empty
  /// batch ends the drainer.
  mutating func take() -> [Entry] {
    var batch: [Entry] = []
    swap(&batch, &entries)
    if let run = dropped {
      batch.append(.dropped(run))
      dropped = nil
    }
    isDraining = !batch.isEmpty
    return batch
  }

  /// The drainer wrote `count` lines. Returns the waiters to wake: those whose lines are all
  /// written.
  mutating func wrote(_ count: Int) -> [DispatchSemaphore] {
    written &+= UInt64(count)
    let woken = waiters.prefix { $0.end <= written }
    waiters.removeFirst(woken.count)
    return woken.map(\.semaphore)
  }

  /// What to wait on until every line accepted so far is written; `nil` if it is.
  mutating func waiter() -> DispatchSemaphore? {
    guard written < accepted else { return nil }
    let semaphore = DispatchSemaphore(value: 0)
    waiters.append((accepted, semaphore))
    return semaphore
  }
}
