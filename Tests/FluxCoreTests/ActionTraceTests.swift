import Testing

@testable import FluxCore

@Suite("ActionTrace")
struct ActionTraceTests {
  @Test("a store whose middleware asks for traces sees the global dispatch in its hooks; another sees none")
  func onlyTracedStoresTrace() {
    let traced = TraceProbe()
    let plain = TraceProbe()
    let stores = [
      Store<TraceState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(traced).tracingActions()]),
      Store<TraceState>(state: .init(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(plain)]),
    ]
    Store<TraceState>.actions.dispatch(action: 1)
    Store<TraceState>.actions.dispatch(action: 2)
    stores[0].actions.dispatch(action: 3)
    let seen = traced.seen
    #expect(seen.count == 3)
    #expect(seen[0] != 0 && seen[1] != 0 && seen[0] != seen[1])
    #expect(seen[2] == nil)  // one store's dispatch, nothing held or cancelled: no trace
    #expect(plain.seen == [nil, nil])
    #expect(ActionTrace.current == nil)  // only during the hooks
    withExtendedLifetime(stores) {}
  }
}

extension ActionTraceTests {
  @Test(
    "a traced store whose didCommit dispatches to another traced store on .immediate: the other's hooks see no trace but their own"
  )
  func traceOfTheDispatchingStoreDoesNotLeak() {
    let inner = TraceProbe()
    let innerStore = Store<TraceState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(inner).tracingActions()])
    let outer = TraceProbe()
    let relay = RelayOnCommit(to: innerStore.actions)
    let outerStore = Store<OuterTraceState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(relay), AnyMiddleware(OuterProbe(probe: outer)).tracingActions()])
    // The outer action comes from a global dispatch, so it has a trace; the inner one is
    // dispatched to one store and neither held nor cancelled, so it has none.
    Store<OuterTraceState>.actions.dispatch(action: 7)
    // The outer store's probe runs after the relay: it still sees its own trace.
    #expect(outer.seen.count == 1 && outer.seen[0] != nil)
    #expect(inner.seen == [nil])
    #expect(ActionTrace.current == nil)
    withExtendedLifetime((innerStore, outerStore)) {}
  }
}

final class OuterTraceState: State {
  typealias Action = Int
  typealias Mutations = OuterTraceMutations
}

struct OuterTraceMutations: Mutations {
  func commit(action: Int, state: OuterTraceState) {}
}

/// In its `didCommit`, dispatches the action to another store.
struct RelayOnCommit: Middleware {
  let target: Actions<TraceState>

  init(to target: Actions<TraceState>) {
    self.target = target
  }

  func didCommit(action: Int, state: OuterTraceState) {
    target.dispatch(action: action)
  }
}

/// A ``TraceProbe`` for the outer store, whose `didCommit` runs after the relay's.
struct OuterProbe: Middleware {
  let probe: TraceProbe

  func didCommit(action: Int, state: OuterTraceState) {
    probe.note(ActionTrace.current(for: state)?.dispatch)
  }
}

final class TraceState: State {
  typealias Action = Int
  typealias Mutations = TraceMutations
}

struct TraceMutations: Mutations {
  func commit(action: Int, state: TraceState) {}
}

/// Notes the global-dispatch number of the current trace in each `didCommit`.
final class TraceProbe: Middleware, @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  private var numbers: [UInt64?] = []

  var seen: [UInt64?] { lock.withLock { numbers } }

  func note(_ number: UInt64?) {
    lock.withLock { numbers.append(number) }
  }

  func didCommit(action: Int, state: TraceState) {
    note(ActionTrace.current(for: state)?.dispatch)
  }
}
