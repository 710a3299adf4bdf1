import Dispatch
import FluxCore
import FluxTesting
import Testing

@Suite("Replay")
struct ReplayTests {
  /// A session of two stores, recorded.
  static func session() throws -> Recording {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let a = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeAmounts()), log.middleware(label: "a")])
    let b = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "b")])
    a.actions.dispatch(action: .add(2))
    b.actions.dispatch(action: .set(10))
    a.actions.dispatch(action: .add(-5))  // cancelled
    b.actions.dispatch(action: .add(1))
    a.actions.dispatch(action: .add(3))
    log.flush()  // the log's queue writes the lines
    return try Recording(jsonLines: lines.text)
  }

  @Test("dispatches the committed actions into fresh stores by label, and they read as the recorded ones")
  func reproduces() async throws {
    let a = StoreTester<CounterState>(state: .init(), mutations: .init())
    let b = StoreTester<CounterState>(state: .init(), mutations: .init())
    let replay = Replay(try Self.session())
    replay.route("a", to: a.actions)
    replay.route("b", to: b.actions)
    #expect(try await replay.run() == 4)
    await a.expect(committed: [.add(2), .add(3)])
    await b.expect(committed: [.set(10), .add(1)])
    a.expect(reading: \.count.value, equals: 5)
    b.expect(reading: \.count.value, equals: 11)
  }

  @Test("a label with no route is an error naming its line, and nothing is dispatched")
  func unknownLabel() async throws {
    let a = StoreTester<CounterState>(state: .init(), mutations: .init())
    let replay = Replay(try Self.session())
    replay.route("a", to: a.actions)
    let error = await #expect(throws: RecordingError.self) { try await replay.run() }
    #expect(error?.description == "line 2: no store to replay \"b\" into")
    a.finish()
  }

  @Test("an action that does not decode is an error naming its line, and nothing is dispatched")
  func badAction() async throws {
    let text = """
      {"action":{"reset":{}},"durationNanoseconds":1,"outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}
      {"action":{"jump":{}},"durationNanoseconds":1,"outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}

      """
    let a = StoreTester<CounterState>(state: .init(), mutations: .init())
    let replay = Replay(try Recording(jsonLines: text))
    replay.route("a", to: a.actions)
    let error = await #expect(throws: RecordingError.self) { try await replay.run() }
    #expect(error?.line == 2)
    a.finish()
  }

  @Test("a resolving route finds each store when its action's turn comes")
  func resolving() async throws {
    let a = StoreTester<CounterState>(state: .init(), mutations: .init())
    let b = StoreTester<CounterState>(state: .init(), mutations: .init())
    let replay = Replay(try Self.session())
    replay.route(
      CounterState.self, labels: { $0.count == 1 },
      to: { label in label == "a" ? a.actions : label == "b" ? b.actions : nil })
    try await replay.run()
    a.expect(reading: \.count.value, equals: 5)
    b.expect(reading: \.count.value, equals: 11)
  }

  @Test("a route to a store that has been freed is an error naming the line, not a silent loss")
  func freedStore() async throws {
    var store: Store<CounterState>? = Store(state: .init(), mutations: .init(), executor: .immediate)
    let replay = Replay(try Self.session())
    replay.route("a", to: store!.actions)
    let b = StoreTester<CounterState>(state: .init(), mutations: .init())
    replay.route("b", to: b.actions)
    store = nil
    let error = await #expect(throws: RecordingError.self) { try await replay.run() }
    #expect(error?.line == 1)
    #expect(error?.message.contains("freed") == true, "\(String(describing: error))")
    b.finish()
  }

  @Test("a cancelled action is no error: the store is alive")
  func cancelledIsNoError() async throws {
    let a = StoreTester<CounterState>(
      state: .init(), mutations: .init(), middlewares: [AnyMiddleware(NoNegativeAmounts())])
    let text = """
      {"action":{"add":{"_0":-2}},"durationNanoseconds":1,"outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}

      """
    let replay = Replay(try Recording(jsonLines: text))
    replay.route("a", to: a.actions)
    #expect(try await replay.run() == 0)
    await a.expect(cancelled: [.add(-2)])
    a.finish()
  }

  @Test("logged follow-ups are replayed: a store without the middleware that made them reads as the recorded one")
  func followUpsAreReplayed() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let refill = RefillAfterReset()
    let recorded = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(refill), log.middleware(label: "counter")])
    refill.serve(recorded.actions)
    recorded.actions.dispatch(action: .add(3))
    recorded.actions.dispatch(action: .reset)
    log.flush()
    let recording = try Recording(jsonLines: lines.text)
    #expect(try recording.entries.map { try $0.action(as: CounterAction.self) } == [.add(3), .reset, .add(10)])
    #expect(recorded.computed.count.value == 10)

    let fresh = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
    let replay = Replay(recording)
    replay.route("counter", to: fresh.actions)
    #expect(try await replay.run() == 3)
    #expect(fresh.computed.count.value == 10)

    // With the middleware, the follow-up is committed twice, as the docs warn.
    let refillAgain = RefillAfterReset()
    let alike = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(refillAgain)])
    refillAgain.serve(alike.actions)
    let again = Replay(recording)
    again.route("counter", to: alike.actions)
    try await again.run()
    #expect(alike.computed.count.value == 20)
  }
}

extension ReplayTests {
  @MainActor
  @Test("run on the main actor dispatches there: a store on .immediate commits each action on the main queue")
  func runDispatchesFromTheCallersIsolation() async throws {
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
    let (onMain, offMain) = (Flag(), Flag())
    let replaying = Flag()
    let observation = store.computed.count.signal.observe { _ in
      guard replaying.isSet else { return }  // the current value, delivered as observing starts
      (DispatchQueue.getSpecific(key: mainQueueKey) == true ? onMain : offMain).set()
    }
    replaying.set()
    let replay = Replay(try Self.session())
    replay.route("a", to: store.actions)
    replay.route("b", to: store.actions)
    #expect(try await replay.run() > 0)
    observation.dispose()
    #expect(onMain.isSet && !offMain.isSet, "a replayed action committed off the caller's actor")
  }
}
