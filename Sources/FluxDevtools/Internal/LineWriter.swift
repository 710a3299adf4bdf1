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
// `@unchecked Sendable`: `queue` is guarded by `lock`; `writtenLines` is touched only by the
// drainer, which runs on `writer` (a serial queue), one at a time (``LineQueue/offer(_:)``
// starts one only when none runs); the rest are constants.
final class LineWriter: @unchecked Sendable {
  private let output: ActionLogOutput
  private let numbersLines: Bool
  private let lock = Lock()
  private var queue: LineQueue
  private let writer = DispatchQueue(label: "FluxDevtools.ActionLog")
  private var writtenLines: UInt64 = 0
  /// The process that made the writer: the only one its queue runs in. A child forked from it
  /// has no drainer (its one thread is the one that forked), and what waits in its copy of the
  /// queue is the parent's.
  private let process = getpid()
  /// Set on ``writer`` to this writer's identity, to tell when code runs there: on its own
  /// queue, not on the queue of another log's writer (whose output may let go of this log).
  private static let onWriter = DispatchSpecificKey<ObjectIdentifier>()

  init(output: ActionLogOutput, numbersLines: Bool, limit: Int) {
    self.output = output
    self.numbersLines = numbersLines
    self.queue = LineQueue(limit: limit)
    writer.setSpecific(key: Self.onWriter, value: ObjectIdentifier(self))
  }

  /// Queues `line`, of an action that ended at `date` (now if `nil`), or drops it if the queue is
  /// full; starts the drainer if none runs.
  func offer(_ line: any PendingLine, at date: Date? = nil) {
    let startsDrainer = lock.withLock { queue.offer(line, at: date ?? Date()) }
    // A dropped line's action and snapshot are released here, after the lock (rule 16).
    withExtendedLifetime(line) {}
    if startsDrainer { writer.async { self.drain() } }
  }

  /// Takes what is queued, encodes it and writes it, until nothing is left.
  private func drain() {
    let encoder = ActionLogLine<Int>.makeEncoder()
    var batch = lock.withLock { queue.take() }
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
      (waiters, batch) = lock.withLock { (queue.wrote(count), queue.take()) }
      for waiter in waiters { waiter.signal() }
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
    let waiter = lock.withLock { queue.waiter() }
    waiter?.wait()
  }

  /// Returns once the drainer that wrote the lines flushed before the call has let go of this
  /// writer, and so of its output: `writer` is a serial queue, and libdispatch releases a block
  /// it ran before it runs the next. A log let go calls it after ``flush()``, so that its file is
  /// closed, and free for another log, when the log is gone.
  func settle() {
    guard isInItsProcess else { return }
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
