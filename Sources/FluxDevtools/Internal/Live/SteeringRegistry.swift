import FluxCore
import Foundation

/// The stores an app offers the inspector, and the commands on their way to them: taken by the
/// connection's thread as they come, done one at a time, in order, on a queue of their own, so
/// that the thread never waits for a store. The queue is a dispatch queue, not a task: a command
/// is done even when the app's tasks keep every thread of the task pool busy.
// `@unchecked Sendable`: `stores`, `waiting`, `isClosed` and `context` are guarded by `lock`;
// `queue` and `onCommand` are constants.
final class SteeringRegistry: @unchecked Sendable {
  /// The most commands waiting for their turn; one more is answered at once.
  static let waitingLimit = 64

  private let lock = Lock()
  private var stores: [any OfferedStore] = []
  private var waiting = 0
  private var context: SteeringContext?
  private var isClosed = false
  private let queue = DispatchQueue(label: "FluxDevtools.InspectorConnection.commands")
  private let onCommand: (@Sendable (InspectorConnection.Command) -> Void)?

  init(onCommand: (@Sendable (InspectorConnection.Command) -> Void)?) {
    self.onCommand = onCommand
  }

  /// Does one command, answers it, and says so to the app.
  private func run(id: Int, generation: Int, fields: JSONFields) {
    let command = fields.string("command", limit: 32)
    let closed = lock.withLock { isClosed }
    let answer = closed ? .failed("the app is closing its connection") : perform(command, fields)
    let context = lock.withLock {
      waiting -= 1
      return self.context
    }
    context?.engine.send(answer.ack(id: id), generation: generation)
    onCommand?(
      InspectorConnection.Command(
        name: command ?? "", store: fields.string("store", limit: 1024), succeeded: answer.ok, outcome: answer.text))
  }

  /// Connects the registry to its connection, once both exist.
  func attach(_ context: SteeringContext) {
    lock.withLock { self.context = context }
  }

  /// No more commands: those that wait are answered that the app is closing.
  func close() {
    lock.withLock { isClosed = true }
  }

  // MARK: Stores

  /// Offers `store`, in place of one of the same label.
  func offer(_ store: any OfferedStore) {
    let engine: LiveEngine? = lock.withLock {
      stores.removeAll { $0.label == store.label }
      stores.append(store)
      return context?.engine
    }
    engine?.noteStoresChanged()
  }

  /// Forgets the stores that were freed; returns whether any was.
  func prune() -> Bool {
    let freed: [any OfferedStore] = lock.withLock {
      let freed = stores.filter { !$0.isAlive }
      stores.removeAll { !$0.isAlive }
      return freed
    }
    return !freed.isEmpty
  }

  /// The stores offered, as the `stores` of a hello: `[{"label":…,"state":…,"steerable":…}]`.
  func storesJSON() -> String {
    let stores = lock.withLock { self.stores }
    let items = stores.filter(\.isAlive).map {
      "{\"label\":\(JSONText.string($0.label)),\"state\":\(JSONText.string($0.stateName)),\"steerable\":\($0.isSteerable)}"
    }
    return "[" + items.joined(separator: ",") + "]"
  }

  // MARK: Commands

  /// Takes a command from the connection's thread: queued, or answered at once.
  func take(_ fields: JSONFields, generation: Int) -> CommandIntake {
    guard let id = fields.wholeNumber("id") else {
      return .wrong("a command without \"id\", a whole number from 0 to 2^53 − 1")
    }
    let isFull: Bool = lock.withLock {
      guard waiting < Self.waitingLimit else { return true }
      waiting += 1
      return false
    }
    if isFull {
      return .answer(Answer.failed("the app has \(Self.waitingLimit) commands to do already").ack(id: id))
    }
    queue.async { [self] in run(id: id, generation: generation, fields: fields) }
    return .accepted
  }

  private func perform(_ command: String?, _ fields: JSONFields) -> Answer {
    guard let context = lock.withLock({ self.context }) else { return .failed("the app is not ready") }
    switch command {
    case "pause"?:
      // The log writes on its own queue: the lines of actions that ended before the command
      // reach the buffer first, and are sent.
      _ = context.flush()
      _ = context.engine.setPaused(true)
      return .done("paused: the app sends no line until resumed")
    case "resume"?:
      // And the lines of actions that ended while paused reach it before the resume.
      _ = context.flush()
      let count = context.engine.setPaused(false)
      return .done(count == 0 ? "resumed" : "resumed: \(count) \(count == 1 ? "line was" : "lines were") not sent")
    case "import"?:
      return importLines(fields, context)
    case "jump"?, "present"?, "skip"?, "unskip"?, "dispatch"?:
      guard let label = fields.string("store", limit: 1024) else {
        return .failed("\(command!) needs \"store\", the label of a store")
      }
      guard let store = lock.withLock({ stores.first { $0.label == label } }), store.isAlive else {
        return .failed("the app has no store \(label)")
      }
      return store.run(command!, fields, context)
    case nil:
      return .failed("a command needs \"command\", its name")
    case let other?:
      return .failed("the app knows no command \(other.prefix(64))")
    }
  }

  /// Sets each steerable store with lines in the import to the state after its last one.
  private func importLines(_ fields: JSONFields, _ context: SteeringContext) -> Answer {
    guard let raw = fields.raw("lines"), let ranges = JSONScanner.elements(ofArray: raw) else {
      return .failed("import needs \"lines\", an array of the lines of a log, each a JSON object")
    }
    var lines: [ImportedLine] = []
    for (index, range) in ranges.enumerated() {
      guard let line = try? JSONFields(raw[range]) else {
        return .failed("line \(index + 1) of the import is not a JSON object")
      }
      guard let store = line.string("store", limit: 1024) else { continue }
      lines.append(
        ImportedLine(
          index: index + 1, store: store, isCommitted: line.string("outcome", limit: 16) == "committed", fields: line))
    }
    let stores = lock.withLock { self.stores }.filter { $0.isSteerable && $0.isAlive }
    var imports: [PreparedImport] = []
    do throws(SteerError) {
      for store in stores {
        if let prepared = try store.prepareImport(lines, context) { imports.append(prepared) }
      }
      guard !imports.isEmpty else {
        let labels = stores.map(\.label).joined(separator: ", ")
        return .failed(
          "no line of the import is a committed action of a store the app lets the Inspector steer"
            + (labels.isEmpty ? "" : " (\(labels))"))
      }
      for prepared in imports { try prepared.apply() }
    } catch {
      return .failed(error.message)
    }
    let total = ranges.count
    return .done(
      "imported \(total) \(total == 1 ? "line" : "lines"): " + imports.map(\.description).joined(separator: "; "))
  }
}
