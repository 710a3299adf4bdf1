import FluxCore
import Foundation

/// A store the inspector may steer: its timeline of actions, the commands that changed its
/// state, and how to work out a state it did not record.
///
/// The timeline is what the app did: its own actions (and those dispatched from the inspector),
/// less the skipped ones, from the state the store had when the app offered it. A `jump` shows a
/// recorded state and leaves the timeline; the app's actions go on, on the state shown, and are
/// in the timeline as usual. `present`, `skip` and `unskip` set the store to the timeline's state
/// now (without the skipped actions), worked out on a scratch state from the nearest state known
/// to be the timeline's, through the mutations. An `import` sets the store to a state of
/// another session, and the timeline goes on from it.
///
/// A state is known to be the timeline's (a base) when it is the recorded state of a line of the
/// app's own written while no jump was in force, with the same skipped actions before it as now;
/// or the state a command set, computed for the same skipped actions, with no action of the app
/// between its computation and its commit; or the state the store had when it was offered.
// `@unchecked Sendable`: `timeline` is guarded by `lock`; the rest are constants.
final class SteeredStore<State: Snapshotting>: OfferedStore, @unchecked Sendable where State.Action: Codable {
  let label: String
  let stateName = String(describing: State.self)
  private weak let store: Store<State>?
  private let mutations: State.Mutations
  private let makeState: @Sendable () -> State
  private let lock = Lock()
  // Guarded by `lock`.
  private var timeline: Timeline

  /// A command that set the store's state and left a line (or should have).
  struct Event: Sendable {
    enum Kind: String, Sendable {
      case jump, present, skip, unskip, `import`
    }
    let kind: Kind
    /// The `n` of its line, once found among the lines written between its dispatch and the flush
    /// after its commit; `nil` when it was not (not kept: the buffer was full).
    let line: Int?
    /// Lines written before its dispatch, and up to the flush after its commit.
    let dispatchedAt: Int
    let foundBy: Int
    /// The state it set, and the skipped actions it was computed for.
    let snapshot: State.Snapshot
    let skipped: Set<Int>
    /// Whether its state is the timeline's after its line (no action of the app came between).
    var isBase: Bool

    var isJump: Bool { kind == .jump }

    /// Whether it is in force on line `n` (a line after its own); `nil` when that is not known
    /// (`n` falls between its dispatch and the flush, and its line was not found).
    func governs(_ n: Int) -> Bool? {
      if let line { return n > line }
      if n >= foundBy { return true }
      return n < dispatchedAt ? false : nil
    }
  }

  /// What steering knows of the store's history.
  struct Timeline: Sendable {
    /// The state the store had when the app offered it, before line `start`.
    let start: Int
    let initial: State.Snapshot
    var events: [Event] = []
    var skipped: Set<Int> = []
    /// A commit that did not come within the time: commands wait for it.
    var pending: SteeringMarks.Ticket?
  }

  init(
    _ store: Store<State>, label: String, mutations: State.Mutations, makeState: @escaping @Sendable () -> State,
    start: Int
  ) {
    self.store = store
    self.label = label
    self.mutations = mutations
    self.makeState = makeState
    self.timeline = Timeline(start: start, initial: store.computed.state.snapshot)
  }

  var isSteerable: Bool { true }
  var isAlive: Bool { store != nil }

  // MARK: Commands

  func run(_ command: String, _ fields: JSONFields, _ context: SteeringContext) -> Answer {
    if let waiting = lock.withLock({ timeline.pending }) {
      guard context.marks.isEnded(waiting) else {
        return .failed(
          "\(label) has not yet committed the previous command: its executor is busy; try again when it has")
      }
      lock.withLock { timeline.pending = nil }
    }
    do throws(SteerError) {
      switch command {
      case "jump":
        guard let to = fields.wholeNumber("to") else { throw SteerError("jump needs \"to\", the number of a line") }
        try jump(to: to, context)
        return .done("jumped \(label) to after #\(to)")
      case "present":
        let missed = try recompute(.present, skipped: lock.withLock { timeline.skipped }, context)
        return .done("\(label) is back to the present" + Self.missing(missed))
      case "skip", "unskip":
        guard let at = fields.wholeNumber("at") else {
          throw SteerError("\(command) needs \"at\", the number of a line")
        }
        try checkSkippable(at, context)
        var skipped = lock.withLock { timeline.skipped }
        if command == "skip" { skipped.insert(at) } else { skipped.remove(at) }
        let missed = try recompute(command == "skip" ? .skip : .unskip, skipped: skipped, context)
        return .done("\(command == "skip" ? "skipped" : "unskipped") #\(at) of \(label)" + Self.missing(missed))
      case "dispatch":
        guard let raw = fields.raw("action") else {
          throw SteerError("dispatch needs \"action\", the action as JSON, as the log writes actions")
        }
        let action = try Self.decodeAction(raw)
        try commitDispatched(action, context)
        return .done("dispatched \(Self.name(of: raw)) to \(label)")
      default:
        throw SteerError("\(command) is not a command of a store")
      }
    } catch {
      return .failed(error.message)
    }
  }

  /// Sets the store to the state after line `to`: as recorded, or worked out on the timeline.
  private func jump(to: Int, _ context: SteeringContext) throws(SteerError) {
    let written = context.flush()
    guard to < written else { throw SteerError("the app has written no line \(to) yet") }
    guard let line = context.line(to) else {
      throw SteerError(
        "the app no longer holds line \(to) (it keeps the last \(context.engine.settings.bufferLines) lines)")
    }
    guard line.facts.store == label else {
      throw SteerError(
        line.facts.store.map { "line \(to) is an action of \($0), not of \(label)" }
          ?? "line \(to) is not an action of a store")
    }
    let snapshot: State.Snapshot
    if line.facts.hasState {
      snapshot = try Self.decodeState(of: line.text, line: to)
    } else {
      let skipped = lock.withLock { timeline.skipped }
      snapshot = try compute(until: to + 1, skipped: skipped, context)
    }
    _ = try commitRestore(snapshot, kind: .jump, skipped: lock.withLock { timeline.skipped }, context)
  }

  /// Checks that line `at` is an action of the store's timeline, which may be skipped.
  private func checkSkippable(_ at: Int, _ context: SteeringContext) throws(SteerError) {
    guard let line = context.line(at) else {
      throw SteerError(
        at >= context.engine.lineCount
          ? "the app has written no line \(at) yet"
          : "the app no longer holds line \(at) (it keeps the last \(context.engine.settings.bufferLines) lines)")
    }
    guard line.facts.store == label else {
      throw SteerError(
        line.facts.store.map { "line \(at) is an action of \($0), not of \(label)" }
          ?? "line \(at) is not an action of a store")
    }
    guard at >= lock.withLock({ timeline.start }) else {
      throw SteerError("line \(at) came before the app let the Inspector steer \(label)")
    }
    guard line.facts.isTimelineAction else {
      throw SteerError(
        line.facts.isCommitted
          ? "line \(at) is the Inspector's \(line.facts.steered ?? "command"), not an action of the app"
          : "line \(at) was cancelled: it changed nothing")
    }
  }

  /// Sets the store to the timeline's state now, for `skipped`: computed from the nearest base,
  /// committed; again while actions of the app came between the computation and the commit, for
  /// as long as a command may wait for a commit (``SteeringContext/commitTimeout``). Returns how
  /// many actions of the app the state set last misses: 0 unless the app committed without a
  /// pause for all that time.
  private func recompute(_ kind: Event.Kind, skipped: Set<Int>, _ context: SteeringContext) throws(SteerError)
    -> Int
  {
    let deadline = Clock.now() &+ context.engine.settings.nanoseconds(context.commitTimeout)
    while true {
      let written = context.flush()
      let snapshot = try compute(until: written, skipped: skipped, context)
      let event = try commitRestore(snapshot, kind: kind, skipped: skipped, context)
      lock.withLock { timeline.skipped = skipped }
      guard let line = event.line else { return 0 }
      let between = (try? context.lines(from: written, until: line, for: label)) ?? []
      let missed = between.filter { $0.facts.store == label && $0.facts.isTimelineAction }.count
      guard missed > 0 else { return 0 }
      // The app's actions came between: the state set misses them. Not a base; once more.
      lock.withLock {
        if let index = timeline.events.lastIndex(where: { $0.line == line }) { timeline.events[index].isBase = false }
      }
      if Clock.now() >= deadline { return missed }
    }
  }

  /// What an answer adds when the state set misses `missed` actions of the app.
  private static func missing(_ missed: Int) -> String {
    guard missed > 0 else { return "" }
    return "; \(missed) \(missed == 1 ? "action" : "actions") the app committed meanwhile, without a pause, "
      + "\(missed == 1 ? "is" : "are") not in it"
  }

  /// Dispatches an action typed in the inspector, and waits for its commit.
  private func commitDispatched(_ action: State.Action, _ context: SteeringContext) throws(SteerError) {
    _ = try commit(action, kind: "dispatch", context)
  }

  /// Dispatches `action` to the store and waits for its commit; returns the lines written before
  /// the dispatch. Its line is marked `kind`.
  private func commit(_ action: State.Action, kind: String, _ context: SteeringContext) throws(SteerError) -> Int {
    guard let actions = store?.actions else { throw SteerError("the store \(label) is gone: the app freed it") }
    guard let ticket = context.marks.expect(action, label: label, kind: kind) else {
      throw SteerError("the action cannot be encoded as JSON, as the log writes actions")
    }
    let dispatchedAt = context.engine.lineCount
    actions.dispatch(action: action)
    switch context.marks.wait(ticket, timeout: context.commitTimeout) {
    case .committed:
      return dispatchedAt
    case .cancelled:
      throw SteerError("\(label) did not commit it: a middleware cancelled it")
    case .timedOut:
      lock.withLock { timeline.pending = ticket }
      throw SteerError(
        "\(label) has not committed it within \(LiveEngine.seconds(context.commitTimeout)): its executor is busy, "
          + "a middleware holds it, or the store does not log to this connection; it commits it when it can")
    }
  }

  /// Commits the restore of `snapshot`, and records it as an event of `kind`.
  private func commitRestore(
    _ snapshot: State.Snapshot, kind: Event.Kind, skipped: Set<Int>, _ context: SteeringContext
  ) throws(SteerError) -> Event {
    let dispatchedAt = try commit(State.restore(snapshot), kind: kind.rawValue, context)
    let known = Set(lock.withLock { timeline.events.compactMap(\.line) })
    // The commit is known as its line is made, a moment before the log holds it: looked for until
    // it is there, for as long as a command may wait, or until a line it needs was not kept.
    let deadline = Clock.now() &+ context.engine.settings.nanoseconds(context.commitTimeout)
    var foundBy: Int
    var line: HeldLine?
    while true {
      foundBy = context.flush()
      guard let lines = try? context.lines(from: dispatchedAt, until: foundBy, for: label) else { break }
      line = lines.first { $0.facts.store == label && $0.facts.steered == kind.rawValue && !known.contains($0.n) }
      if line != nil || Clock.now() >= deadline { break }
      usleep(1_000)
    }
    let event = Event(
      kind: kind, line: line?.n, dispatchedAt: dispatchedAt, foundBy: foundBy, snapshot: snapshot, skipped: skipped,
      isBase: true)
    lock.withLock { timeline.events.append(event) }
    return event
  }

  // MARK: Working out a state

  /// The timeline's state after the lines before `end`, for `skipped`: from the nearest base,
  /// replaying the store's actions after it (but the skipped ones) through the mutations, on a
  /// scratch state, on the steering queue.
  private func compute(until end: Int, skipped: Set<Int>, _ context: SteeringContext) throws(SteerError)
    -> State.Snapshot
  {
    try work(until: end, skipped: skipped, lock.withLock { timeline }, context)
  }

  private func work(until end: Int, skipped: Set<Int>, _ timeline: Timeline, _ context: SteeringContext)
    throws(SteerError) -> State.Snapshot
  {
    guard end >= timeline.start else {
      throw SteerError("that line came before the app let the Inspector steer \(label), and has no recorded state")
    }
    let base = try findBase(until: end, skipped: skipped, timeline, context)
    let lines = try context.lines(from: base.after, until: end, for: label)
    let state = makeState()
    mutations.commit(action: State.restore(base.snapshot), state: state)
    for line in lines where line.facts.store == label && line.facts.isCommitted {
      if line.facts.steered == Event.Kind.import.rawValue {
        let snapshot: State.Snapshot
        if let event = timeline.events.first(where: { $0.line == line.n }) {
          snapshot = event.snapshot
        } else {
          snapshot = try Self.decodeState(of: line.text, line: line.n)
        }
        mutations.commit(action: State.restore(snapshot), state: state)
      } else if line.facts.isTimelineAction && !skipped.contains(line.n) {
        mutations.commit(action: try Self.decodeAction(ofLine: line.text, line: line.n), state: state)
      }
    }
    return state.snapshot
  }

  /// The latest state before `end` known to be the timeline's for `skipped`, and the line after it.
  private func findBase(until end: Int, skipped: Set<Int>, _ timeline: Timeline, _ context: SteeringContext)
    throws(SteerError) -> (after: Int, snapshot: State.Snapshot)
  {
    func agree(_ other: Set<Int>, through n: Int) -> Bool {
      other.filter { $0 <= n } == skipped.filter { $0 <= n }
    }
    var best: (after: Int, snapshot: () throws(SteerError) -> State.Snapshot) = (
      timeline.start, { timeline.initial }
    )
    for event in timeline.events where !event.isJump && event.isBase {
      guard let line = event.line, line < end, line + 1 > best.after else { continue }
      if event.kind == .import || agree(event.skipped, through: line) {
        best = (line + 1, { event.snapshot })
      }
    }
    // The app's own lines with a recorded state, latest first, down to the best so far.
    for line in context.heldLines(from: best.after, until: end).reversed() {
      let n = line.n
      guard line.facts.store == label, line.facts.isTimelineAction, line.facts.hasState else { continue }
      var governing: Event?
      var isKnown = true
      for event in timeline.events {
        switch event.governs(n) {
        case true?: governing = event
        case nil: isKnown = false
        case false?: break
        }
      }
      // A line after a jump is on the jumped state; one after a restore that missed actions of the
      // app (no longer a base) is on a state without them: neither is the timeline's.
      guard isKnown, governing.map({ !$0.isJump && $0.isBase }) ?? true, agree(governing?.skipped ?? [], through: n)
      else {
        continue
      }
      return (n + 1, try Self.decodeState(of: line.text, line: n))
    }
    return (best.after, try best.snapshot())
  }

  // MARK: Imports

  func prepareImport(_ lines: [ImportedLine], _ context: SteeringContext) throws(SteerError) -> PreparedImport? {
    let mine = lines.filter { $0.store == label && $0.isCommitted }
    guard let last = mine.last else { return nil }
    let snapshot: State.Snapshot
    if last.fields.has("state") {
      snapshot = try Self.decodeState(last.fields.raw("state") ?? [], what: "line \(last.index) of the import")
    } else {
      let state = makeState()
      for line in mine {
        guard let raw = line.fields.raw("action") else {
          throw SteerError("line \(line.index) of the import has no \"action\"")
        }
        let action: State.Action
        do throws(SteerError) {
          action = try Self.decodeAction(raw)
        } catch {
          throw SteerError("line \(line.index) of the import: \(error.message)")
        }
        mutations.commit(action: action, state: state)
      }
      snapshot = state.snapshot
    }
    return PreparedImport(description: "\(label) took the state after line \(last.index) of the import") {
      [self] () throws(SteerError) in
      _ = try commitRestore(snapshot, kind: .import, skipped: lock.withLock { timeline.skipped }, context)
    }
  }

  // MARK: Decoding

  private static func decoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    // As the log writes them: see ``ActionLogLine/encoded()``.
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: NonFiniteNumbers.positiveInfinity, negativeInfinity: NonFiniteNumbers.negativeInfinity,
      nan: NonFiniteNumbers.nan)
    return decoder
  }

  /// An action typed as JSON, as the log writes actions; the error says where it is wrong.
  static func decodeAction(_ raw: ArraySlice<UInt8>) throws(SteerError) -> State.Action {
    let json = Data(raw)
    do {
      return try decoder().decode(State.Action.self, from: json)
    } catch DecodingError.typeMismatch(let type, let context) {
      // A synthesized enum tells a key that is none of its cases as a type mismatch.
      if let key = Recording.Entry.onlyKey(in: json, at: context.codingPath) {
        throw SteerError("the action is not a \(State.Action.self) (no case `\(key)` in \(type))")
      }
      throw SteerError(
        "the action is not a \(State.Action.self) (\(describe(DecodingError.typeMismatch(type, context))))")
    } catch {
      throw SteerError("the action is not a \(State.Action.self) (\(describe(error)))")
    }
  }

  private static func describe(_ error: any Error) -> String {
    if case DecodingError.dataCorrupted(let context) = error, context.codingPath.isEmpty {
      return "a number or a string in it cannot be read: too large for its type, or not JSON"
    }
    // What is wrong with the whole value, the words of a log speak of "the line": here it is the action.
    let text = RecordingError.describe(error)
    return text.hasPrefix("the line ") ? "the action" + text.dropFirst("the line".count) : text
  }

  private static func decodeAction(ofLine text: String, line: Int) throws(SteerError) -> State.Action {
    let bytes = Array(text.utf8)
    guard let fields = try? JSONFields(bytes.last == 0x0A ? bytes.dropLast() : bytes[...]),
      let raw = fields.raw("action")
    else { throw SteerError("line \(line) has no action that can be read") }
    do throws(SteerError) {
      return try decodeAction(raw)
    } catch {
      throw SteerError("line \(line): \(error.message)")
    }
  }

  private static func decodeState(of text: String, line: Int) throws(SteerError) -> State.Snapshot {
    let bytes = Array(text.utf8)
    guard let fields = try? JSONFields(bytes.last == 0x0A ? bytes.dropLast() : bytes[...]),
      let raw = fields.raw("state")
    else { throw SteerError("line \(line) has no state that can be read") }
    return try decodeState(raw, what: "line \(line)")
  }

  private static func decodeState(_ raw: ArraySlice<UInt8>, what: String) throws(SteerError) -> State.Snapshot {
    do {
      return try decoder().decode(State.Snapshot.self, from: Data(raw))
    } catch {
      throw SteerError("\(what): the state is not a \(State.Snapshot.self) (\(describe(error)))")
    }
  }

  /// The name of an action typed as JSON, for the answer: its case, when it is an object of one key.
  static func name(of raw: ArraySlice<UInt8>) -> String {
    if let fields = try? JSONFields(raw), fields.fields.count == 1, let key = fields.fields.keys.first {
      return String(key.prefix(64))
    }
    if let text = JSONScanner.string(raw) { return String(text.prefix(64)) }
    return "an action"
  }
}
