import Dispatch
import FluxCore
import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The queue of an ``ActionLog``: takes the pending lines of committing threads, and encodes and
/// writes them on a queue of its own, in the order their actions ended (``LineQueue``).
///
/// Apart from the log, so that a drainer keeps the writer alive, not the log: the log's deinit
/// waits for the lines it queued (``ActionLog``), unless it runs on the writer's own queue.
///
/// A drainer that runs out of lines lingers (``LineQueue``): checks of the queue come on the
/// writer's queue after naps, so that a line offered soon after does not wake a thread on the
/// committing thread. A check holds the ``Lines`` and the queue, not the writer: a writer let go
/// goes, with its output, whatever checks are still to come.
// `@unchecked Sendable`: `writtenLines` is touched only by the drainer, which runs on `writer` (a
// serial queue), one at a time (``LineQueue/offer(_:at:)`` starts one only when none runs or
// lingers); the rest are constants.
final class LineWriter: @unchecked Sendable {
  /// The lock, and the queue it guards.
  // `@unchecked Sendable`: `queue` is guarded by `lock`.
  final class Lines: @unchecked Sendable {
    let lock = Lock()
    var queue: LineQueue

    init(limit: Int, lingers: Bool) {
      queue = LineQueue(limit: limit, lingers: lingers)
    }
  }

  private let output: ActionLogOutput
  private let numbersLines: Bool
  private let lines: Lines
  private let writer = DispatchQueue(label: "FluxDevtools.ActionLog")
  private var writtenLines: UInt64 = 0
  /// The process that made the writer: the only one its queue runs in. A child forked from it
  /// has no drainer (its one thread is the one that forked), and what waits in its copy of the
  /// queue is the parent's.
  private let process = getpid()
  /// Set on ``writer`` to this writer's identity, to tell when code runs there: on its own
  /// queue, not on the queue of another log's writer (whose output may let go of this log).
  private static let onWriter = DispatchSpecificKey<ObjectIdentifier>()

  /// A writer of `output`; one that `lingers` looks for lines a while after it runs out
  /// (``LineQueue``).
  init(output: ActionLogOutput, numbersLines: Bool, limit: Int, lingers: Bool = true) {
    self.output = output
    self.numbersLines = numbersLines
    self.lines = Lines(limit: limit, lingers: lingers)
    writer.setSpecific(key: Self.onWriter, value: ObjectIdentifier(self))
  }

  /// Queues `line`, of an action that ended at `date` (now if `nil`), or drops it if the queue is
  /// full; starts the drainer if none runs or lingers.
  func offer(_ line: any PendingLine, at date: Date? = nil) {
    let startsDrainer = lines.lock.withLock { lines.queue.offer(line, at: date ?? Date()) }
    // A dropped line's action and snapshot are released here, after the lock (rule 16).
    withExtendedLifetime(line) {}
    if startsDrainer { writer.async { self.drain() } }
  }

  /// Takes what is queued, encodes it and writes it, until nothing is left; then lingers.
  private func drain() {
    let encoder = ActionLogLine<Int>.makeEncoder()
    let started = Date()
    var (batch, nap) = lines.lock.withLock { lines.queue.take(at: started) }
    while !batch.isEmpty {
      for entry in batch {
        let sequence = numbersLines ? writtenLines &+ 1 : nil
        writtenLines &+= 1
        switch entry {
        case .line(let line, let date): output.write(line.encoded(date: date, sequence: sequence, with: encoder))
        case .dropped(let run): output.write(run.encoded(sequence: sequence, with: encoder))
        }
      }
      let count = batch.count
      batch = []  // the values of the lines written go here, outside the lock
      let waiters: [DispatchSemaphore]
      let now = Date()
      (waiters, batch, nap) = lines.lock.withLock {
        let waiters = lines.queue.wrote(count)
        let taken = lines.queue.take(at: now)
        return (waiters, taken.batch, taken.nap)
      }
      for waiter in waiters { waiter.signal() }
    }
    if let nap { Self.schedule(nap, of: lines, writer: self, on: writer) }
  }

  /// Runs the check of a linger on `queue` after its nap, and the next, until one says to drain
  /// (then `writer`, if it is still there, drains) or the linger is over. Holds `lines`, and
  /// `writer` weakly: a check of a linger that ``settle()`` ended never touches the writer.
  private static func schedule(
    _ nap: LineQueue.Nap, of lines: Lines, writer: LineWriter, on queue: DispatchQueue
  ) {
    queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nap.nanoseconds))) { [weak writer] in
      let now = Date()
      switch lines.lock.withLock({ lines.queue.check(nap, at: now) }) {
      case .nothing:
        return
      case .nap(let next):
        guard let writer else {
          // Let go without ``settle()``: on its own queue, in its output, where the drainer
          // that called it wrote every line before it ended. Nothing can be offered now.
          _ = lines.lock.withLock { lines.queue.endLinger() }
          return
        }
        schedule(next, of: lines, writer: writer, on: queue)
      case .drain:
        // Lines came, so the log that offered them is alive, or waits in its deinit for them
        // (``flush()`` started a drainer, and this check found none to start): so is the writer.
        guard let writer else {
          preconditionFailure("FluxDevtools: an ActionLog's lines were queued after its writer was let go")
        }
        writer.drain()
      }
    }
  }

  /// Returns once every line queued before the call is written; at once in a child process
  /// forked from the writer's, where nothing is written (``isInItsProcess``).
  func flush() {
    guard isInItsProcess else { return }
    if isOnWriter {
      // fatalError, not precondition: its message is printed in optimized builds too.
      fatalError(
        "ActionLog.flush() was called from the log's own output (directly, or through finish() or "
          + "writeFlightRecord()): it would wait for ever for the line being written")
    }
    let (waiter, startsDrainer) = lines.lock.withLock { lines.queue.waiter() }
    if startsDrainer { writer.async { self.drain() } }
    waiter?.wait()
  }

  /// Returns once the drainer that wrote the lines flushed before the call has let go of this
  /// writer, and so of its output: `writer` is a serial queue, and libdispatch releases a block
  /// it ran before it runs the next. A log let go calls it after ``flush()``, so that its file is
  /// closed, and free for another log, when the log is gone. Ends a linger, so that no check
  /// that comes later holds the writer.
  func settle() {
    guard isInItsProcess else { return }
    let startsDrainer = lines.lock.withLock { lines.queue.endLinger() }
    if startsDrainer { writer.async { self.drain() } }
    writer.sync {}
  }

  /// Whether the caller runs in the process that made the writer, not in a child forked from
  /// it: there the writer's queue never runs a drainer, so that ``flush()`` would wait for ever
  /// (at the exit of a child whose `exec` failed, say), and the lines it holds, and the file it
  /// writes, are the parent's.
  var isInItsProcess: Bool {
    getpid() == process
  }

  /// Whether the caller runs on this writer's queue, where ``flush()`` would wait for itself.
  /// (An identity that matches is this writer's: the queue that carries it lives with it.)
  var isOnWriter: Bool {
    DispatchQueue.getSpecific(key: Self.onWriter) == ObjectIdentifier(self)
  }
}
