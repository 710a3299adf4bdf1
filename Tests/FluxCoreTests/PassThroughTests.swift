import FluxCore
import Testing

/// A middleware with hooks only: it keeps the default interception.
private struct Watcher<Tag>: Middleware {
  let events: Recorder<String>

  func willCommit(action: Int, state: LogState<Tag>) { events.append("will \(action)") }
  func didCommit(action: Int, state: LogState<Tag>) { events.append("did \(action)") }
}

/// A middleware without any hook of its own.
private struct Quiet<Tag>: Middleware {
  typealias State = LogState<Tag>
}

/// Lets even actions through by asking `Quiet`'s default interception, cancels odd ones.
private struct EvenOnly<Tag>: Middleware {
  let inner = Quiet<Tag>()

  func intercept(action: Int, state: LogState<Tag>, proceed: Proceed) {
    if action.isMultiple(of: 2) {
      inner.intercept(action: action, state: state, proceed: proceed)
    } else {
      proceed.cancel()
    }
  }
}

/// A shared middleware that keeps the default interception and counts commits of one type.
private struct SharedWatcher<Tag>: SharedMiddleware {
  let events: Recorder<String>

  func didCommit(action: any Sendable, state: any State) {
    if state is LogState<Tag> { events.append("shared did \(action)") }
  }
}

/// A store skips the interception of a middleware that keeps the default one, once it has seen
/// that middleware's default decide; everything else stays as it was.
@Suite("Middleware that keeps the default interception")
struct PassThroughTests {
  enum Hooks {}
  enum Wrapped {}
  enum Mixed {}
  enum Shared {}

  @Test("its hooks still run around every commit, in order")
  func hooksStillRun() {
    let events = Recorder<String>()
    let state = LogState<Hooks>()
    let store = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(Watcher<Hooks>(events: events))])
    for action in 1...3 { store.actions.dispatch(action: action) }
    #expect(events.values == ["will 1", "did 1", "will 2", "did 2", "will 3", "did 3"])
    #expect(state.committed.values == [1, 2, 3])
  }

  @Test("inv14: a middleware whose own interception calls another's default is never skipped")
  func inv14_wrapperOfADefaultIsNeverSkipped() {
    let state = LogState<Wrapped>()
    let store = Store(
      state: state, mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(EvenOnly<Wrapped>())])
    for action in 0..<6 { store.actions.dispatch(action: action) }
    #expect(state.committed.values == [0, 2, 4])
  }

  @Test("inv14: an intercepting middleware after a skipped one still sees, and decides, every action")
  func inv14_interceptorAfterASkippedStageSeesEveryAction() {
    let events = Recorder<String>()
    let state = LogState<Mixed>()
    let held = Recorder<Int>()
    let store = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [
        AnyMiddleware(Quiet<Mixed>()),
        AnyMiddleware(
          Probe<Mixed>(name: "probe", events: events) { action, proceed in
            if action == 2 {
              proceed.cancel()
            } else {
              held.append(action)
              proceed()
            }
          }),
        AnyMiddleware(AnyMiddleware(Quiet<Mixed>())),
      ])
    for action in 1...4 { store.actions.dispatch(action: action) }
    #expect(events.values.filter { $0.hasPrefix("probe intercept") }.count == 4)
    #expect(held.values == [1, 3, 4])
    #expect(state.committed.values == [1, 3, 4])
  }

  @Test("a shared middleware that keeps the default interception still sees every commit")
  func sharedDefaultStillSeesEveryCommit() {
    let events = Recorder<String>()
    let registration = SharedMiddlewares.add(SharedWatcher<Shared>(events: events))
    defer { registration.remove() }
    let store = Store(state: LogState<Shared>(), mutations: .init(), executor: .immediate)
    for action in 1...3 { store.actions.dispatch(action: action) }
    #expect(events.values == ["shared did 1", "shared did 2", "shared did 3"])
  }
}
