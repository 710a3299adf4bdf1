import FluxReactive

/// A sink or variable under test, seen through the steps of a ``ModelProgram``.
protocol ModelSubject: AnyObject {
  func observe(id: Int, _ observer: @escaping @Sendable (Int) -> Void) -> any Disposable
  func send(_ value: Int)
  func modify(_ value: Int)
  func read() -> Int
}

/// A ``Sink`` under test.
final class ModelSink: ModelSubject {
  private let sink = Sink<Int>()

  func observe(id: Int, _ observer: @escaping @Sendable (Int) -> Void) -> any Disposable {
    sink.signal.observe(observer)
  }

  func send(_ value: Int) { sink.send(value: value) }
  func modify(_ value: Int) { sink.send(value: value) }
  func read() -> Int { preconditionFailure("a sink has no value") }
}

/// A ``Variable`` under test; odd observer ids observe through its ``Constant`` view.
final class ModelVariable: ModelSubject {
  private let variable: Variable<Int>

  init(_ initial: Int) {
    variable = Variable(initial)
  }

  func observe(id: Int, _ observer: @escaping @Sendable (Int) -> Void) -> any Disposable {
    let signal = id.isMultiple(of: 2) ? variable.signal : variable.constant.signal
    return signal.observe(observer)
  }

  func send(_ value: Int) { variable.value = value }
  func modify(_ value: Int) { variable.modify { $0 = value } }
  func read() -> Int { variable.value }
}

/// Runs a ``ModelProgram`` against a real subject and records what happened, in the form of
/// the model's events.
///
/// Observers are plain closures that record each call, then run their reaction steps, as user
/// code would. Each observer's disposable is kept in a slot made before `observe` is called, so
/// an observer can dispose itself even from inside the replay that `observe` makes.
///
/// `@unchecked Sendable` because observers are `@Sendable` closures and capture the harness:
/// it is only ever used on the thread that runs the program, on which a sink or variable calls
/// its observers (`callsOnOtherThreads` checks this).
final class ModelHarness: @unchecked Sendable {
  private final class Slot {
    var disposable: (any Disposable)?
    var isDisposed = false

    func set(_ disposable: any Disposable) {
      if isDisposed { disposable.dispose() } else { self.disposable = disposable }
    }

    func dispose() {
      isDisposed = true
      disposable?.dispose()
    }
  }

  private let program: ModelProgram
  private let subject: any ModelSubject
  private var slots: [Int: Slot] = [:]
  private let thread = currentThreadID()
  private(set) var events: [ModelEvent] = []
  /// Observer calls made on another thread than the one that runs the program.
  private(set) var callsOnOtherThreads = 0

  init(program: ModelProgram, subject: any ModelSubject) {
    self.program = program
    self.subject = subject
  }

  /// Runs the program's top-level steps.
  func run() {
    for step in program.steps { run(step, by: nil) }
  }

  private func run(_ step: ModelStep, by observer: Int?) {
    switch step {
    case .observe(let id):
      guard slots[id] == nil else { return }
      let slot = Slot()
      slots[id] = slot
      slot.set(subject.observe(id: id) { [unowned self] value in receive(value, by: id) })
    case .dispose(let id):
      slots[id]?.dispose()
    case .send(let value):
      subject.send(value)
      events.append(.returned(value: value))
    case .modify(let value):
      subject.modify(value)
      events.append(.returned(value: value))
    case .read:
      events.append(.read(observer: observer, value: subject.read()))
    }
  }

  private func receive(_ value: Int, by id: Int) {
    if !isCurrentThread(thread) { callsOnOtherThreads += 1 }
    events.append(.received(observer: id, value: value))
    for step in program.reactions[ModelTrigger(observer: id, value: value)] ?? [] {
      run(step, by: id)
    }
  }
}
