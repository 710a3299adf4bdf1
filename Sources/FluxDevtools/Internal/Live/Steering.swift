import FluxCore
import Foundation

/// What steering reads of one line of the log: its store, whether it was committed, whether a
/// command caused it, whether it holds a state.
struct LineFacts: Sendable {
  let store: String?
  let isCommitted: Bool
  let steered: String?
  let hasState: Bool

  init(_ text: String) {
    let bytes = Array(text.utf8)
    guard let fields = try? JSONFields(bytes.last == 0x0A ? bytes.dropLast() : bytes[...]) else {
      self.init(store: nil, isCommitted: false, steered: nil, hasState: false)
      return
    }
    self.init(
      store: fields.string("store"), isCommitted: fields.string("outcome", limit: 16) == "committed",
      steered: fields.string("steered", limit: 16), hasState: fields.has("state"))
  }

  init(store: String?, isCommitted: Bool, steered: String?, hasState: Bool) {
    self.store = store
    self.isCommitted = isCommitted
    self.steered = steered
    self.hasState = hasState
  }

  /// Whether the line is an action of the app's own, or one dispatched from the inspector: an
  /// action that the present replays (unless skipped), and that may be skipped.
  var isTimelineAction: Bool {
    isCommitted && (steered == nil || steered == "dispatch")
  }
}

/// A line of the log that steering read, with its number.
struct HeldLine: Sendable {
  let n: Int
  let text: String
  let facts: LineFacts
}

/// A command that could not be done, in words for the page.
struct SteerError: Error, Sendable {
  let message: String

  init(_ message: String) {
    self.message = message
  }
}

/// What steering needs from the connection: its lines, its log, and the marks.
// `@unchecked Sendable`: `facts` is guarded by `lock`; everything else is a constant.
final class SteeringContext: @unchecked Sendable {
  let engine: LiveEngine
  let log: ActionLog
  let marks: SteeringMarks
  /// How long a command waits for its store to commit, in seconds.
  let commitTimeout: Double
  private let lock = Lock()
  private var facts: [Int: LineFacts] = [:]

  init(engine: LiveEngine, log: ActionLog, marks: SteeringMarks, commitTimeout: Double) {
    self.engine = engine
    self.log = log
    self.marks = marks
    self.commitTimeout = commitTimeout
  }

  /// Waits until every line of an action that ended is in the buffer (or counted as not kept);
  /// returns how many lines the log wrote.
  func flush() -> Int {
    log.flush()
    return engine.lineCount
  }

  /// The lines from `start` to `end` (not included), each read; throws when one of them is no
  /// longer held (or was never kept), naming it. Lines of the other stores are among them.
  func lines(from start: Int, until end: Int, for label: String) throws(SteerError) -> [HeldLine] {
    guard start < end else { return [] }
    let entries = engine.entries(from: start, until: end)
    guard let first = entries.first, first.start <= start else {
      throw SteerError(
        "the app no longer holds line \(start) and those after it that \(label) needs (it keeps the last "
          + "\(engine.settings.bufferLines) lines)")
    }
    var lines: [HeldLine] = []
    lines.reserveCapacity(end - start)
    for entry in entries {
      guard entry.start < end else { break }
      guard let text = entry.text else {
        let from = max(entry.start, start)
        throw SteerError(
          "lines \(from)–\(min(entry.end, end) - 1) were not kept by the app (its buffer was full, or it was paused), "
            + "and \(label) needs them")
      }
      guard entry.start >= start else { continue }
      lines.append(HeldLine(n: entry.start, text: text, facts: facts(entry.start, text)))
    }
    return lines
  }

  /// The line `n`, read, if it is held.
  func line(_ n: Int) -> HeldLine? {
    guard let entry = engine.entries(from: n, until: n + 1).first, entry.start == n, let text = entry.text else {
      return nil
    }
    return HeldLine(n: n, text: text, facts: facts(n, text))
  }

  /// The lines held from `start` to `end` (not included), each read; those not held are left out.
  func heldLines(from start: Int, until end: Int) -> [HeldLine] {
    guard start < end else { return [] }
    return engine.entries(from: start, until: end).compactMap { entry in
      guard let text = entry.text, entry.start >= start else { return nil }
      return HeldLine(n: entry.start, text: text, facts: facts(entry.start, text))
    }
  }

  private func facts(_ n: Int, _ text: String) -> LineFacts {
    if let known = lock.withLock({ facts[n] }) { return known }
    let read = LineFacts(text)
    lock.withLock {
      if facts.count > 4 * engine.settings.bufferLines + 1024 {
        let first = engine.firstKept
        facts = facts.filter { $0.key >= first }
      }
      facts[n] = read
    }
    return read
  }
}

/// The answer to one command.
struct Answer: Sendable {
  let ok: Bool
  let text: String

  static func done(_ text: String) -> Answer { Answer(ok: true, text: text) }
  static func failed(_ text: String) -> Answer { Answer(ok: false, text: text) }

  /// The `ack` message for command `id`.
  func ack(id: Int) -> String {
    "{\"type\":\"ack\",\"id\":\(id),\"ok\":\(ok),\"\(ok ? "outcome" : "error")\":\(JSONText.string(text))}"
  }
}

/// A store the app offers the inspector: steerable, or read-only.
protocol OfferedStore: AnyObject, Sendable {
  var label: String { get }
  var stateName: String { get }
  var isSteerable: Bool { get }
  /// Whether the store is still alive.
  var isAlive: Bool { get }
  /// Does a command of the store (jump, present, skip, unskip, dispatch), on the steering queue.
  func run(_ command: String, _ fields: JSONFields, _ context: SteeringContext) -> Answer
  /// Reads the lines of an import that are this store's; returns what sets the store to the
  /// state after the last of them, or `nil` when none is.
  func prepareImport(_ lines: [ImportedLine], _ context: SteeringContext) throws(SteerError) -> PreparedImport?
}

/// One line of an import: its place in the import (from 1), its store, and its fields.
struct ImportedLine: Sendable {
  let index: Int
  let store: String
  let isCommitted: Bool
  let fields: JSONFields
}

/// What an import does to one store, once every store's lines were read.
struct PreparedImport: Sendable {
  /// Says what the store took.
  let description: String
  /// Sets the store; throws what went wrong.
  let apply: @Sendable () throws(SteerError) -> Void
}

/// A store the app lets the inspector see, but not steer.
final class ReadOnlyStore<State: FluxCore.State>: OfferedStore {
  let label: String
  let stateName = String(describing: State.self)
  private weak let store: Store<State>?

  init(_ store: Store<State>, label: String) {
    self.store = store
    self.label = label
  }

  var isSteerable: Bool { false }
  var isAlive: Bool { store != nil }

  func run(_ command: String, _ fields: JSONFields, _ context: SteeringContext) -> Answer {
    .failed("the store \(label) is read-only: the app does not let the Inspector steer it")
  }

  func prepareImport(_ lines: [ImportedLine], _ context: SteeringContext) throws(SteerError) -> PreparedImport? {
    nil
  }
}
