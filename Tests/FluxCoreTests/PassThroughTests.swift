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

/// Conforms to both middleware protocols. As a shared middleware it intercepts on its own: it
/// cancels odd actions and lets even ones through by calling its interception as a
/// ``Middleware``, which it leaves as the default.
private struct DualGate<Tag>: Middleware, SharedMiddleware {
  typealias State = LogState<Tag>

  func intercept(action: any Sendable, state: any FluxCore.State, proceed: Proceed) {
    guard let action = action as? Int, let state = state as? LogState<Tag> else { return proceed() }
    if action.isMultiple(of: 2) {
      interceptAsMiddleware(self, action, state, proceed)
    } else {
      proceed.cancel()
    }
  }
}

/// The same the other way round: as a ``Middleware`` it intercepts on its own, and lets even
/// actions through by calling its default interception as a shared middleware.
private struct ReverseDualGate<Tag>: Middleware, SharedMiddleware {
  func intercept(action: Int, state: LogState<Tag>, proceed: Proceed) {
    if action.isMultiple(of: 2) {
      interceptAsShared(self, action, state, proceed)
    } else {
      proceed.cancel()
    }
  }
}

private func interceptAsMiddleware<M: Middleware>(
  _ middleware: M, _ action: M.State.Action, _ state: M.State, _ proceed: Proceed
) {
  middleware.intercept(action: action, state: state, proceed: proceed)
}

private func interceptAsShared<M: SharedMiddleware>(
  _ middleware: M, _ action: any Sendable, _ state: any FluxCore.State, _ proceed: Proceed
) {
  middleware.intercept(action: action, state: state, proceed: proceed)
}

/// Wraps `middleware` for a store as the shared middleware it also is.
private func wrappedAsShared<M: SharedMiddleware, S: FluxCore.State>(_ middleware: M, for: S.Type) -> AnyMiddleware<S> {
  AnyMiddleware<S>(middleware)
}

/// Wraps `middleware` for a store as the ``Middleware`` it also is.
private func wrappedAsMiddleware<M: Middleware>(_ middleware: M) -> AnyMiddleware<M.State> {
  AnyMiddleware(middleware)
}

/// A store skips the interception of a middleware that keeps the default one, once it has seen
/// that middleware's default decide; everything else stays as it was.
@Suite("Middleware that keeps the default interception")
struct PassThroughTests {
  enum Hooks {}
  enum Wrapped {}
  enum Mixed {}
  enum Shared {}
  enum Dual {}
  enum ReverseDual {}

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

  @Test("inv14: a type that keeps one protocol's default interception and writes the other's is never skipped")
  func inv14_bothProtocolsNeverSkipped() {
    let state = LogState<Dual>()
    let store = Store(
      state: state, mutations: .init(), executor: .immediate,
      middlewares: [wrappedAsShared(DualGate<Dual>(), for: LogState<Dual>.self)])
    for action in 1...6 { store.actions.dispatch(action: action) }
    #expect(state.committed.values == [2, 4, 6])

    let reverseState = LogState<ReverseDual>()
    let reverse = Store(
      state: reverseState, mutations: .init(), executor: .immediate,
      middlewares: [wrappedAsMiddleware(ReverseDualGate<ReverseDual>())])
    for action in 1...6 { reverse.actions.dispatch(action: action) }
    #expect(reverseState.committed.values == [2, 4, 6])
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
