import FluxCore
import Foundation

/// The stores an app offers the inspector, and the commands on their way to them: taken by the
/// connection's thread as they come, done one at a time, in order, by a task of their own, so
/// that the thread never waits for a store.
// `@unchecked Sendable`: `stores`, `waiting` and `context` are guarded by `lock`; `queue` is a
// continuation, which may be called from any thread.
final class SteeringRegistry: @unchecked Sendable {
  /// The most commands waiting for their turn; one more is answered at once.
  static let waitingLimit = 64

  private let lock = Lock()
  private var stores: [any OfferedStore] = []
  private var waiting = 0
  private var context: SteeringContext?
  private let queue: AsyncStream<Job>.Continuation
  private let onCommand: (@Sendable (InspectorConnection.Command) -> Void)?

  private struct Job: Sendable {
    let id: Int
    let generation: Int
    let fields: JSONFields
  }

  init(onCommand: (@Sendable (InspectorConnection.Command) -> Void)?) {
    self.onCommand = onCommand
    let (stream, queue) = AsyncStream.makeStream(of: Job.self)
    self.queue = queue
    Task.detached { [self] in
      for await job in stream {
        let command = job.fields.string("command", limit: 32)
        let answer = await perform(command, job.fields)
        let context = lock.withLock {
          waiting -= 1
          return self.context
        }
        context?.engine.send(answer.ack(id: job.id), generation: job.generation)
        onCommand?(
          InspectorConnection.Command(
            name: command ?? "", store: job.fields.string("store", limit: 1024), succeeded: answer.ok,
            outcome: answer.text))
      }
    }
  }

  /// Connects the registry to its connection, once both exist.
  func attach(_ context: SteeringContext) {
    lock.withLock { self.context = context }
  }

  /// No more commands: the task ends once it has done those that wait.
  func close() {
    queue.finish()
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
    if case .terminated = queue.yield(Job(id: id, generation: generation, fields: fields)) {
      lock.withLock { waiting -= 1 }
      return .answer(Answer.failed("the app is closing its connection").ack(id: id))
    }
    return .accepted
  }

  private func perform(_ command: String?, _ fields: JSONFields) async -> Answer {
    guard let context = lock.withLock({ self.context }) else { return .failed("the app is not ready") }
    switch command {
    case "pause"?:
      _ = context.engine.setPaused(true)
      return .done("paused: the app sends no line until resumed")
    case "resume"?:
      let count = context.engine.setPaused(false)
      return .done(count == 0 ? "resumed" : "resumed: \(count) \(count == 1 ? "line was" : "lines were") not sent")
    case "import"?:
      return await importLines(fields, context)
    case "jump"?, "present"?, "skip"?, "unskip"?, "dispatch"?:
      guard let label = fields.string("store", limit: 1024) else {
        return .failed("\(command!) needs \"store\", the label of a store")
      }
      guard let store = lock.withLock({ stores.first { $0.label == label } }), store.isAlive else {
        return .failed("the app has no store \(label)")
      }
      return await store.run(command!, fields, context)
    case nil:
      return .failed("a command needs \"command\", its name")
    case let other?:
      return .failed("the app knows no command \(other.prefix(64))")
    }
  }

  /// Sets each steerable store with lines in the import to the state after its last one.
  private func importLines(_ fields: JSONFields, _ context: SteeringContext) async -> Answer {
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
    let imported = lines
    let prepared: Result<[PreparedImport], SteerError> = await context.blocking {
      var prepared: [PreparedImport] = []
      for store in stores {
        do throws(SteerError) {
          if let one = try store.prepareImport(imported, context) { prepared.append(one) }
        } catch {
          return .failure(error)
        }
      }
      return .success(prepared)
    }
    switch prepared {
    case .failure(let error):
      return .failed(error.message)
    case .success(let imports) where imports.isEmpty:
      let labels = stores.map(\.label).joined(separator: ", ")
      return .failed(
        "no line of the import is a committed action of a store the app lets the Inspector steer"
          + (labels.isEmpty ? "" : " (\(labels))"))
    case .success(let imports):
      for prepared in imports {
        do throws(SteerError) {
          try await prepared.apply()
        } catch {
          return .failed(error.message)
        }
      }
      let total = ranges.count
      return .done(
        "imported \(total) \(total == 1 ? "line" : "lines"): " + imports.map(\.description).joined(separator: "; "))
    }
  }
}
