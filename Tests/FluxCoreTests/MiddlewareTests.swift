import Dispatch
import FluxCore
import Foundation
import Testing

/// Records every hook call as text, and can hold actions back.
struct Probe<Tag>: Middleware {
  let name: String
  let events: Recorder<String>
  var hold: (@Sendable (Int, Proceed) -> Void)?

  func intercept(action: Int, state: LogState<Tag>, proceed: Proceed) {
    events.append("\(name) intercept \(action)")
    if let hold { hold(action, proceed) } else { proceed() }
  }

  func willCommit(action: Int, state: LogState<Tag>) {
    events.append("\(name) will \(action) seen \(state.committed.values.count)")
  }

  func didCommit(action: Int, state: LogState<Tag>) {
    events.append("\(name) did \(action) seen \(state.committed.values.count)")
  }

  func didCancel(action: Int, state: LogState<Tag>) {
    events.append("\(name) cancelled \(action)")
  }
}

/// Shared middleware that reports only the actions of stores of one state type.
struct SharedProbe<Tag>: SharedMiddleware {
  let events: Recorder<String>

  func intercept(action: any Sendable, state: any State, proceed: Proceed) {
    if state is LogState<Tag> { events.append("shared intercept \(action)") }
    proceed()
  }

  func willCommit(action: any Sendable, state: any State) {
    if state is LogState<Tag> { events.append("shared will \(action)") }
  }

  func didCommit(action: any Sendable, state: any State) {
    if state is LogState<Tag> { events.append("shared did \(action)") }
  }
}

@Suite("Middleware")
struct MiddlewareTests {
  enum Hooks {}
  enum Cancel {}
  enum Delay {}
  enum Dropped {}
  enum Concurrent {}
  enum Freed {}
  enum Dispatching {}
  enum Shared {}
  enum SharedExisting {}
  enum Global {}
  enum Cycle {}
  enum Logging {}
  enum Twice {}

  @Test("hooks run around the commit: intercept, willCommit with the state before, didCommit with it after")
  func hookTiming() {
    let events = Recorder<String>()
    let store = Store(
      state: LogState<Hooks>(), mutations: .init(), executor: .immediate,
      middlewares: [
        AnyMiddleware(Probe<Hooks>(name: "a", events: events)), AnyMiddleware(Probe<Hooks>(name: "b", events: events)),
      ])
    store.actions.dispatch(action: 1)
    #expect(
      events.values == [
        "a intercept 1", "b intercept 1", "a will 1 seen 0", "b will 1 seen 0", "a did 1 seen 1", "b did 1 seen 1",
      ])
  }

  @Test("a middleware cancels an action: no commit, every didCancel sees it, later actions go on")
  func cancel() {
    let events = Recorder<String>()
    let state = LogState<Cancel>()
    let recorder = ActionRecorder<LogState<Cancel>>()
    let guardMiddleware = Probe<Cancel>(name: "guard", events: events) { action, proceed in
      action == 2 ? proceed.cancel() : proceed()
    }
    let store = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(guardMiddleware), AnyMiddleware(recorder)])
    for action in 1...3 { store.actions.dispatch(action: action) }
    #expect(state.committed.values == [1, 3])
    #expect(recorder.records == [.committed(1), .cancelled(2), .committed(3)])
    #expect(events.values.contains("guard cancelled 2"))
  }

  @Test(
    "a delayed action does not hold up later ones, and commits on the executor when it proceeds from another thread")
  func delayAndProceedLater() {
    let events = Recorder<String>()
    let held = Box<Proceed?>(nil)
    let state = LogState<Delay>()
    let queue = DispatchQueue(label: "store")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 1)
    let onQueue = Recorder<Bool>()
    state.hook = { _ in onQueue.append(DispatchQueue.getSpecific(key: key) == 1) }
    let holder = Probe<Delay>(name: "hold", events: events) { action, proceed in
      if action == 1 { held.value = proceed } else { proceed() }
    }
    let store = Store(state: state, mutations: .init(), executor: .queue(queue), middlewares: [AnyMiddleware(holder)])
    store.actions.dispatch(action: 1)
    store.actions.dispatch(action: 2)
    #expect(waitUntil { state.committed.values == [2] })
    let proceed = queue.sync { held.value }
    DispatchQueue.global().async { proceed?() }
    #expect(waitUntil { state.committed.values == [2, 1] })
    #expect(onQueue.values == [true, true])
    #expect(state.overlapCount == 0)
  }

  @Test("a decision made on another thread while the interception still runs counts as made during it")
  func decisionFromAnotherThreadDuringInterception() {
    let state = LogState<Concurrent>()
    let recorder = ActionRecorder<LogState<Concurrent>>()
    let elsewhere = Probe<Concurrent>(name: "elsewhere", events: Recorder()) { action, proceed in
      let done = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        action % 2 == 0 ? proceed.cancel() : proceed()
        done.signal()
      }
      done.wait()
    }
    let store = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(elsewhere), AnyMiddleware(recorder)])
    for action in 1...6 { store.actions.dispatch(action: action) }
    #expect(state.committed.values == [1, 3, 5])
    #expect(recorder.cancelled == [2, 4, 6])
  }

  @Test("a proceed released without a decision cancels the action")
  func droppedProceedCancels() {
    let recorder = ActionRecorder<LogState<Dropped>>()
    let kept = Box<Proceed?>(nil)
    let state = LogState<Dropped>()
    let ignoring = Probe<Dropped>(name: "ignore", events: Recorder()) { action, proceed in
      if action == 2 { kept.value = proceed }  // kept, then dropped below; action 1 dropped at once
    }
    let store = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(ignoring), AnyMiddleware(recorder)])
    store.actions.dispatch(action: 1)
    store.actions.dispatch(action: 2)
    #expect(recorder.records == [.cancelled(1)])
    kept.value = nil  // the cancellation runs later, from a worker thread, never in this stack
    #expect(waitUntil { recorder.records == [.cancelled(1), .cancelled(2)] })
    #expect(state.committed.values.isEmpty)
  }

  @Test("proceed after the store is freed does nothing")
  func proceedAfterStoreFreed() {
    let held = Box<Proceed?>(nil)
    let state = LogState<Freed>()
    var store: Store<LogState<Freed>>? = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [
        AnyMiddleware(Probe<Freed>(name: "hold", events: Recorder()) { _, proceed in held.value = proceed })
      ])
    store?.actions.dispatch(action: 1)
    store = nil
    held.value?()
    #expect(state.committed.values.isEmpty)
  }

  @Test("deciding one action twice stops with a message")
  func secondDecisionStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      final class TwiceState: State {
        typealias Action = Int
        typealias Mutations = TwiceMutations
      }
      struct TwiceMutations: Mutations {
        func commit(action: Int, state: TwiceState) {}
      }
      struct Twice: Middleware {
        func intercept(action: Int, state: TwiceState, proceed: Proceed) {
          proceed()
          proceed()
        }
      }
      let store = Store(
        state: TwiceState(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(Twice())])
      store.actions.dispatch(action: 1)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: a middleware decided the same action twice"), "\(message)")
  }

  @Test("an action dispatched from a middleware hook is queued, never nested")
  func middlewareDispatches() {
    let events = Recorder<String>()
    let actions = Box<Actions<LogState<Dispatching>>?>(nil)
    struct Chain: Middleware {
      let events: Recorder<String>
      let actions: Box<Actions<LogState<Dispatching>>?>
      func didCommit(action: Int, state: LogState<Dispatching>) {
        events.append("did \(action)")
        if action == 1 { actions.value?.dispatch(action: 2) }
        events.append("after dispatch in did \(action)")
      }
      func willCommit(action: Int, state: LogState<Dispatching>) { events.append("will \(action)") }
    }
    let store = Store(
      state: LogState<Dispatching>(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(Chain(events: events, actions: actions))])
    actions.value = store.actions
    store.actions.dispatch(action: 1)
    #expect(
      events.values == ["will 1", "did 1", "after dispatch in did 1", "will 2", "did 2", "after dispatch in did 2"])
  }

  @Test("shared middleware wraps the store's own; within a list the first given runs first")
  func sharedOrdering() {
    let events = Recorder<String>()
    let registration = SharedMiddlewares.add(SharedProbe<Shared>(events: events))
    defer { registration.remove() }
    let store = Store(
      state: LogState<Shared>(), mutations: .init(), executor: .immediate,
      middlewares: [
        AnyMiddleware(Probe<Shared>(name: "a", events: events)),
        AnyMiddleware(Probe<Shared>(name: "b", events: events)),
      ])
    store.actions.dispatch(action: 1)
    #expect(
      events.values == [
        "shared intercept 1", "a intercept 1", "b intercept 1",
        "shared will 1", "a will 1 seen 0", "b will 1 seen 0",
        "a did 1 seen 1", "b did 1 seen 1", "shared did 1",
      ])
    registration.remove()
    store.actions.dispatch(action: 2)
    #expect(!events.values.contains("shared did 2"), "a removed shared middleware still ran")
  }

  @Test("shared middleware reaches stores created before it was added")
  func sharedReachesExistingStores() {
    let events = Recorder<String>()
    let store = Store(state: LogState<SharedExisting>(), mutations: .init(), executor: .immediate)
    let registration = SharedMiddlewares.add(SharedProbe<SharedExisting>(events: events))
    store.actions.dispatch(action: 5)
    registration.remove()
    #expect(events.values == ["shared intercept 5", "shared will 5", "shared did 5"])
  }

  @Test("global dispatch passes through each receiving store's middleware")
  func globalThroughMiddleware() {
    let recorders = (0..<3).map { _ in ActionRecorder<LogState<Global>>() }
    let stores = recorders.map {
      Store(state: LogState<Global>(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware($0)])
    }
    Store<LogState<Global>>.actions.dispatch(action: 9)
    for recorder in recorders { #expect(recorder.committed == [9]) }
    withExtendedLifetime(stores) {}
  }

  @Test("no retain cycle between a store and its middleware")
  func noCycle() {
    let flag = DeallocFlag()
    weak var weakStore: Store<LogState<Cycle>>?
    do {
      let tracked = Tracked(flag)
      let middleware = Probe<Cycle>(name: "x", events: Recorder()) { _, proceed in
        _ = tracked
        proceed()
      }
      let store = Store(
        state: LogState<Cycle>(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(middleware)])
      weakStore = store
      store.actions.dispatch(action: 1)
    }
    #expect(weakStore == nil)
    // Polled: a thread that adds or removes shared middleware meanwhile (another test) may hold
    // the store's replaced pipeline for a moment, and releases it after its locks.
    #expect(waitUntil { flag.isFreed })
  }

  @Test("the logging middleware writes one line per committed action and marks cancelled ones")
  func logging() {
    enum Step: Sendable {
      case add(Int)
      case reset
    }
    final class Counter: State, CustomStringConvertible, @unchecked Sendable {
      typealias Action = Step
      typealias Mutations = CounterMutations
      var count = 0
      var description: String { "Counter(count: \(count))" }
    }
    struct CounterMutations: Mutations {
      func commit(action: Step, state: Counter) {
        switch action {
        case .add(let amount): state.count += amount
        case .reset: state.count = 0
        }
      }
    }
    struct NoReset: Middleware {
      func intercept(action: Step, state: Counter, proceed: Proceed) {
        if case .reset = action { proceed.cancel() } else { proceed() }
      }
    }
    let lines = Recorder<String>()
    let store = Store(
      state: Counter(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoReset()), AnyMiddleware(LoggingMiddleware { lines.append($0) })])
    store.actions.dispatch(action: .add(3))
    store.actions.dispatch(action: .reset)
    #expect(lines.values == ["Step.add(3) -> Counter(count: 3)", "Step.reset cancelled"])
  }

  @Test("the standard-error writer goes on after a short write and after an interrupted one, and stops at an error")
  func loggingWritesWholeLines() {
    let line = Array("Step.add(3) -> Counter(count: 3)\n".utf8)
    var written: [UInt8] = []
    var calls = 0
    line.withUnsafeBufferPointer { bytes in
      LoggingMiddleware.writeAll(bytes) { start, count in
        calls += 1
        if calls % 3 == 0 {
          errno = EINTR
          return -1
        }
        let taken = min(count, 5)
        written += UnsafeRawBufferPointer(start: start, count: taken)
        return taken
      }
    }
    #expect(written == line)
    var attempts = 0
    line.withUnsafeBufferPointer { bytes in
      LoggingMiddleware.writeAll(bytes) { _, _ in
        attempts += 1
        errno = EBADF
        return -1
      }
    }
    #expect(attempts == 1)
  }
}
