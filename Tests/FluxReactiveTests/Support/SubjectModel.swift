/// Something that happened while a ``ModelProgram`` ran, in the order it happened.
enum ModelEvent: Equatable, CustomStringConvertible {
  /// Observer `observer` was called with `value`.
  case received(observer: Int, value: Int)
  /// The send (or set, or modify) of `value` returned.
  case returned(value: Int)
  /// A read of the variable, by an observer or at top level (`nil`), gave `value`.
  case read(observer: Int?, value: Int)

  var description: String {
    switch self {
    case .received(let observer, let value): "#\(observer)<-\(value)"
    case .returned(let value): "ret(\(value))"
    case .read(let observer, let value): "read(\(observer.map { "#\($0)" } ?? "top"))=\(value)"
    }
  }
}

/// The contract of a sink or variable as a plain single-threaded program: what each observer
/// must see, step by step, for a ``ModelProgram``.
///
/// - Invariant 1: a send calls the observers in the order they were added.
/// - Invariant 2: a send from inside a delivery is queued (first in, first out) and returns at
///   once; queued values are delivered, each to all observers, after the current delivery and
///   before the outer send returns.
/// - Invariant 4: a queued value goes to the observers that existed when it was sent, so one
///   added during a delivery misses the value being delivered and those queued before it was
///   added; a disposed observer gets nothing more.
/// - Invariant 5: an observer of a variable gets the current value at once (nested, when added
///   from inside a delivery), then every change. Reading or setting the value from inside an
///   observer works; a set there is queued like a send.
///
/// An observer disposed from inside its own replay is still being added (its `observe` has not
/// returned its disposable yet): the model ends it when its `observe` returns, as a caller
/// holding that disposable does.
struct SubjectModel {
  private struct Observer {
    let id: Int
    let key: Int
    var isAlive = true
  }

  private let program: ModelProgram
  private var observers: [Observer] = []
  private var started: Set<Int> = []
  private var registered: Set<Int> = []
  private var pendingDisposals: Set<Int> = []
  private var nextKey = 0
  private var isDelivering = false
  private var queue: [(value: Int, bound: Int)] = []
  private var current: Int
  private(set) var events: [ModelEvent] = []

  /// Runs `program` and returns what every observer must have seen.
  static func events(of program: ModelProgram) -> [ModelEvent] {
    var model = SubjectModel(program: program)
    for step in program.steps { model.run(step, by: nil) }
    return model.events
  }

  private init(program: ModelProgram) {
    self.program = program
    self.current = program.initial
  }

  private mutating func run(_ step: ModelStep, by observer: Int?) {
    switch step {
    case .observe(let id):
      observe(id)
    case .dispose(let id):
      guard started.contains(id) else { return }
      if registered.contains(id) {
        kill(id)
      } else {
        pendingDisposals.insert(id)
      }
    case .send(let value), .modify(let value):
      send(value)
    case .read:
      events.append(.read(observer: observer, value: current))
    }
  }

  private mutating func observe(_ id: Int) {
    guard started.insert(id).inserted else { return }
    observers.append(Observer(id: id, key: nextKey))
    nextKey += 1
    if program.subject == .variable {
      if isDelivering {
        receive(current, by: id)
      } else {
        isDelivering = true
        receive(current, by: id)
        drainQueue()
        isDelivering = false
      }
    }
    registered.insert(id)
    if pendingDisposals.contains(id) { kill(id) }
  }

  private mutating func kill(_ id: Int) {
    if let index = observers.firstIndex(where: { $0.id == id }) { observers[index].isAlive = false }
  }

  private mutating func send(_ value: Int) {
    current = value
    if isDelivering {
      queue.append((value, nextKey))
    } else {
      isDelivering = true
      deliver(value, below: nextKey)
      drainQueue()
      isDelivering = false
    }
    events.append(.returned(value: value))
  }

  private mutating func drainQueue() {
    while !queue.isEmpty {
      let next = queue.removeFirst()
      deliver(next.value, below: next.bound)
    }
  }

  private mutating func deliver(_ value: Int, below bound: Int) {
    var index = 0
    while index < observers.count, observers[index].key < bound {
      if observers[index].isAlive { receive(value, by: observers[index].id) }
      index += 1
    }
  }

  private mutating func receive(_ value: Int, by id: Int) {
    events.append(.received(observer: id, value: value))
    for step in program.reactions[ModelTrigger(observer: id, value: value)] ?? [] {
      run(step, by: id)
    }
  }
}
