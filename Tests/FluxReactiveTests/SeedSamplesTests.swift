import Dispatch
import FluxCore
import FluxReactive
import Testing

// The samples of VueFlux's README, with UIKit types replaced by plain classes. The README's
// generic arguments (`Store<CounterState>`, `Signal<String>`, `Binder<Bool>`) are restored.
// The stand-ins for UIKit classes are `@MainActor`, as UIKit's are, and so are the tests that
// bind to them; printed output is collected in a `Recorder`, as observers are `@Sendable`.

final class CounterState: State {
  typealias Action = CounterAction
  typealias Mutations = CounterMutations

  fileprivate let count = Variable(0)
}

enum CounterAction {
  case increment, decrement
}

extension Actions where State == CounterState {
  func increment() {
    dispatch(action: .increment)
  }

  func decrement() {
    dispatch(action: .decrement)
  }
}

struct CounterMutations: Mutations {
  func commit(action: CounterAction, state: CounterState) {
    switch action {
    case .increment:
      state.count.value += 1

    case .decrement:
      state.count.value -= 1
    }
  }
}

extension Computed where State == CounterState {
  var countTextValues: Signal<String> {
    return state.count.signal.map { String($0) }
  }

  var count: Constant<Int> {
    state.count.constant
  }
}

@MainActor
final class Label {
  var text: String?
}

@MainActor
final class View {
  var isHidden = false

  func setHiddenBinder(duration: Double) -> Binder<Bool> {
    return Binder(target: self) { view, isHidden in
      view.isHidden = isHidden
    }
  }
}

@MainActor
final class CounterViewController {
  let counterLabel = Label()

  private let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)

  func viewDidLoad() {
    store.computed.countTextValues.bind(to: counterLabel, \.text, on: .immediate)
  }

  func incrementButtonTapped() {
    store.actions.increment()
  }

  func decrementButtonTapped() {
    store.actions.decrement()
  }
}

final class CounterStore: Store<CounterState>, @unchecked Sendable {
  static let shared = CounterStore()

  private init() {
    super.init(state: .init(), mutations: .init(), executor: .queue(.global()))
  }
}

@Suite("VueFlux README samples", .serialized)
struct SeedSamplesTests {
  @Test("view controller binds the count text")
  @MainActor
  func viewController() {
    let controller = CounterViewController()
    controller.viewDidLoad()
    #expect(controller.counterLabel.text == "0")
    controller.incrementButtonTapped()
    controller.incrementButtonTapped()
    controller.decrementButtonTapped()
    #expect(controller.counterLabel.text == "1")
  }

  @Test("sink prints what is sent")
  func sink() {
    let printed = Recorder<String>()
    let sink = Sink<Int>()
    let signal = sink.signal

    signal.observe { printed.append("\($0)") }

    sink.send(value: 100)
    #expect(printed.values == ["100"])
  }

  @Test("signal delivers to all observers in order")
  func signal() {
    let printed = Recorder<String>()
    let sink = Sink<Int>()
    let signal = sink.signal

    signal.observe { printed.append("1: \($0)") }
    signal.observe { printed.append("2: \($0)") }

    sink.send(value: 100)
    sink.send(value: 200)
    #expect(printed.values == ["1: 100", "2: 100", "1: 200", "2: 200"])
  }

  @Test("variable replays then changes")
  func variable() {
    let printed = Recorder<String>()
    let variable = Variable(0)

    variable.signal.observe { printed.append("\($0)") }

    variable.value = 1
    printed.append("\(variable.value)")
    variable.signal.observe { printed.append("\($0)") }
    #expect(printed.values == ["0", "1", "1", "1"])
  }

  @Test("constant reflects its variable")
  func constant() {
    let printed = Recorder<String>()
    let variable = Variable(0)
    let constant = variable.constant

    constant.signal.observe { printed.append("\($0)") }

    variable.value = 1
    printed.append("\(constant.value)")
    constant.signal.observe { printed.append("\($0)") }
    #expect(printed.values == ["0", "1", "1", "1"])
  }

  @Test("map transforms")
  func map() {
    let printed = Recorder<String>()
    let sink = Sink<Int>()
    let signal = sink.signal

    signal
      .map { "Value is \($0)" }
      .observe { printed.append($0) }

    sink.send(value: 100)
    sink.send(value: 200)
    #expect(printed.values == ["Value is 100", "Value is 200"])
  }

  @Test("observe(on: .mainThread) forwards every value on the main queue")
  func observeOnMainThread() async {
    let mainKey = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: mainKey, value: 1)
    let printed = Recorder<String>()
    let sink = Sink<Int>()
    let signal = sink.signal

    let disposable =
      signal
      .observe(on: .mainThread)
      .observe { printed.append("Value: \($0), isMainQueue: \(DispatchQueue.getSpecific(key: mainKey) == 1)") }

    DispatchQueue.global().async {
      sink.send(value: 100)
      sink.send(value: 200)
    }
    #expect(waitUntil { printed.values.count == 2 })
    #expect(printed.values == ["Value: 100, isMainQueue: true", "Value: 200, isMainQueue: true"])
    disposable.dispose()
  }

  @Test("disposable and disposable scope")
  func disposables() {
    let received = Recorder<Int>()
    let sink = Sink<Int>()
    let signal = sink.signal
    let disposable = signal.observe { value in received.append(value) }
    sink.send(value: 1)
    disposable.dispose()
    sink.send(value: 2)

    var disposableScope: DisposableScope? = DisposableScope()
    disposableScope += signal.observe { value in received.append(value * 10) }
    sink.send(value: 3)
    disposableScope = nil
    sink.send(value: 4)
    #expect(received.values == [1, 30])
  }

  @Test("scoped observing and the three bind forms")
  @MainActor
  func scopedAndBind() {
    let text = Variable("a")
    let label = Label()
    var closureLabel: Label? = Label()
    let view = View()
    let isViewHidden = Variable(false)
    var owner: Label? = Label()
    let seen = Recorder<String>()

    text.signal.observe(duringScopeOf: owner!) { seen.append($0) }
    text.signal.bind(to: closureLabel!, on: .immediate) { label, text in label.text = text }
    text.signal.bind(to: label, \.text, on: .immediate)
    isViewHidden.signal.bind(to: view.setHiddenBinder(duration: 0.3), on: .immediate)

    text.value = "b"
    isViewHidden.value = true
    #expect(label.text == "b")
    #expect(closureLabel?.text == "b")
    #expect(view.isHidden)
    owner = nil
    closureLabel = nil
    text.value = "c"
    #expect(seen.values == ["a", "b"])
    #expect(label.text == "c")
  }

  @Test("global dispatch reaches a store")
  func globalDispatch() {
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)

    #expect(store.computed.count.value == 0)
    Store<CounterState>.actions.increment()
    #expect(store.computed.count.value == 1)
  }
}

// The README's view controller as written: its store on `.queue(.global())`, its binding on the
// default `.mainThread`.
@MainActor
final class QueueCounterViewController {
  let counterLabel = Label()

  private let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .queue(.global()))

  func viewDidLoad() {
    store.computed.countTextValues.bind(to: counterLabel, \.text)
  }

  func incrementButtonTapped() {
    store.actions.increment()  // Store.actions.increment()
  }
}

extension Computed where State == CounterState {
  var valueSignal: Signal<Int> {
    state.count.signal
  }
}

extension SeedSamplesTests {
  @Test("view controller as written: store on .queue(.global()), default binding")
  @MainActor
  func viewControllerOnQueue() async {
    let controller = QueueCounterViewController()
    controller.viewDidLoad()
    controller.incrementButtonTapped()
    #expect(await eventuallyOnMainActor { controller.counterLabel.text == "1" })
  }

  @Test("executor sample: a store on .queue(.global()), observed on a background queue")
  func executorSample() {
    let received = Recorder<Int>()
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .queue(.global()))

    let disposable = store.computed.valueSignal
      .observe(on: .queue(.global(qos: .background)))
      .observe { value in
        // Executed on global background queue
        received.append(value)
      }
    #expect(waitUntil { received.values == [0] })
    disposable.dispose()
  }
}
