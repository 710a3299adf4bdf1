import FluxCore
import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The ring of an ``ActionLog`` in flight-recorder mode: the pending lines of the last
/// `capacity` actions, as values, never encoded until they are written (``take()``).
///
/// States: empty → holding 1…capacity lines (each new line past the capacity replaces the
/// oldest) → empty again when they are taken. Taking and handing the lines to the log's queue
/// happen under one lock (``ActionLog/writeFlightRecord()``), so two writes at once never
/// interleave their lines. The ring grows with the lines it holds, up to `capacity`, and keeps
/// the room it grew to: a recorder of a large capacity costs nothing for the lines it never held.
// `@unchecked Sendable`: `ring` and `start` are guarded by `lock`; `slot` is written only under
// `lock` too (and read, without it, only by a fatal-signal handler).
final class FlightRecorder: @unchecked Sendable {
  let capacity: Int
  let lock = Lock()
  /// The lines held: in the order kept until the ring is full, then from `start` on, around.
  private var ring: [(line: any PendingLine, date: Date)] = []
  /// Where the oldest line is, once the ring is full (0 until then).
  private var start = 0
  /// Where a fatal-signal handler finds this recorder's file and count; `nil` for an output
  /// that is not a file.
  private var slot: CrashSlots.Slot?

  init(capacity: Int, path: String?) {
    self.capacity = max(1, capacity)
    slot = path.flatMap(CrashSlots.claim)
  }

  /// Keeps the line of an action that just ended (its time taken under the lock, so that times
  /// follow the order of the ring); returns the line it replaces, to be released after the lock.
  func keep(_ line: any PendingLine) -> (any PendingLine)? {
    lock.withLock {
      let date = Date()
      guard ring.count == capacity else {
        ring.append((line, date))
        slot?.held = ring.count
        return nil
      }
      let replaced = ring[start].line
      ring[start] = (line, date)
      start = start == capacity - 1 ? 0 : start + 1
      return replaced
    }
  }

  /// Under ``lock``: the lines held, oldest first, and the ring emptied.
  func takeLocked() -> [(line: any PendingLine, date: Date)] {
    var taken: [(line: any PendingLine, date: Date)] = []
    taken.reserveCapacity(ring.count)
    taken.append(contentsOf: ring[start...])
    taken.append(contentsOf: ring[..<start])
    ring.removeAll(keepingCapacity: true)
    start = 0
    slot?.held = 0
    return taken
  }

  /// Gives back the slot of the signal handler: the file is finished, or the log is going.
  func release() {
    let slot = lock.withLock {
      defer { self.slot = nil }
      return self.slot
    }
    slot.map(CrashSlots.free)
  }
}

/// What the fatal-signal handler reads: for each flight recorder with a file, a descriptor of
/// its own open on that file (`O_APPEND`) and how many actions it holds. A fixed table of words,
/// allocated once, that the handler reads without a lock (``CrashWords``), and that allocates
/// nothing.
enum CrashSlots {
  /// The most recorders with a file at once that a crash can name; more are recorded all the
  /// same, without the crash line.
  static let capacity = 32

  struct Slot {
    let index: Int
    /// Set under the recorder's lock, read by the handler in one load.
    var held: Int {
      get { table.load(2 * index + 1) }
      nonmutating set { table.store(newValue, at: 2 * index + 1) }
    }
  }

  /// By slot: the descriptor (-1 for a free slot), then the count held.
  static let table = CrashWords(count: 2 * capacity, initial: { $0 % 2 == 0 ? -1 : 0 })
  /// Guards the taking and giving back of slots.
  private static let lock = Lock()

  /// The descriptor of the slot at `index`, or -1 if it is free.
  static func descriptor(at index: Int) -> Int32 {
    Int32(truncatingIfNeeded: table.load(2 * index))
  }

  /// How many actions the recorder of the slot at `index` holds.
  static func held(at index: Int) -> Int {
    table.load(2 * index + 1)
  }

  /// Opens `path` for the handler and takes a free entry; `nil` if none is free or the file
  /// cannot be opened.
  static func claim(path: String) -> Slot? {
    let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    let slot: Slot? = lock.withLock {
      guard let index = (0..<capacity).first(where: { table.load(2 * $0) < 0 }) else { return nil }
      table.store(0, at: 2 * index + 1)
      // Last, so that a handler that sees the descriptor sees the count too.
      table.store(Int(descriptor), at: 2 * index)
      return Slot(index: index)
    }
    if slot == nil { close(descriptor) } else { FatalSignals.install() }
    return slot
  }

  /// Gives the slot back and closes its descriptor: the handler no longer sees it before it is
  /// closed.
  static func free(_ slot: Slot) {
    let descriptor = lock.withLock {
      let descriptor = table.load(2 * slot.index)
      table.store(-1, at: 2 * slot.index)
      table.store(0, at: 2 * slot.index + 1)
      return descriptor
    }
    if descriptor >= 0 { close(Int32(truncatingIfNeeded: descriptor)) }
  }
}
