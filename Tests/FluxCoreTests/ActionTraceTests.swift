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

  func didCommit(action: Int, state: TraceState) {
    let number = ActionTrace.current?.dispatch
    lock.withLock { numbers.append(number) }
  }
}
