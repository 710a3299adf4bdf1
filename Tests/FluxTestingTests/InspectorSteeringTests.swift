import FluxCore
import FluxTesting
import Foundation
import Testing

/// A steerable counter connected to a fake inspector, on `.immediate`.
struct SteeredCounter {
  let inspector: FakeInspector
  let connection: InspectorConnection
  let store: Store<CounterState>
  let readOnly: Store<CounterState>

  init(executor: Executor = .immediate, options: InspectorConnection.Options = fastOptions()) throws {
    inspector = try FakeInspector()
    connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: options)
    store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: executor,
      middlewares: [connection.log.middleware(label: "counter", snapshots: .snapshot)])
    connection.steer(store, label: "counter", mutations: .init(), scratch: { CounterState() })
    readOnly = Store<CounterState>(
      state: .init(), mutations: .init(), executor: executor,
      middlewares: [connection.log.middleware(label: "shown", snapshots: .snapshot)])
    connection.offer(readOnly, label: "shown")
    let connection = connection
    #expect(inspector.waitUntil { connection.phase == .connected })
  }

  var count: Int { store.computed.count.value }

  /// Sends a command to the counter and returns its ack.
  func command(_ name: String, _ more: String = "", store label: String = "counter") throws -> [String: Any] {
    let id = inspector.command(
      "\"store\":\"\(label)\",\"command\":\"\(name)\"" + (more.isEmpty ? "" : "," + more))
    return try #require(inspector.ack(id), "no ack for \(name)")
  }

  /// Waits until the inspector holds `count` lines.
  func waitForLines(_ count: Int) {
    connection.log.flush()
    #expect(inspector.waitUntil { inspector.lines.count >= count }, "\(inspector.lines.count) lines of \(count)")
  }
}

@Suite("Steering from the inspector", .serialized)
struct InspectorSteeringTests {
  @Test("jump takes the state after a line; the app goes on on it; present brings back what it did meanwhile")
  func jumpAndPresent() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    for amount in 1...4 { app.store.actions.dispatch(action: .add(amount)) }
    #expect(app.count == 10)
    app.waitForLines(4)
    let jumped = try app.command("jump", "\"to\":1")
    #expect(jumped["ok"] as? Bool == true, "\(jumped)")
    #expect(jumped["outcome"] as? String == "jumped counter to after #1")
    #expect(app.count == 3)
    app.store.actions.dispatch(action: .add(10))
    #expect(app.count == 13)
    let present = try app.command("present")
    #expect(present["ok"] as? Bool == true, "\(present)")
    #expect(app.count == 20)
    app.waitForLines(7)
    let lines = app.inspector.lines
    #expect(lines[4]?["steered"] as? String == "jump")
    #expect(lines[4]?["state"] as? Int == 3)
    #expect(lines[5]?["steered"] == nil)
    #expect(lines[6]?["steered"] as? String == "present")
    #expect(lines[6]?["state"] as? Int == 20)
  }

  @Test("skip and unskip recompute from the nearest state before the action, through the mutations")
  func skipAndUnskip() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    for amount in 1...4 { app.store.actions.dispatch(action: .add(amount)) }
    app.waitForLines(4)
    _ = try app.command("jump", "\"to\":1")
    app.store.actions.dispatch(action: .add(10))
    _ = try app.command("present")
    #expect(app.count == 20)
    app.waitForLines(7)
    let skipped = try app.command("skip", "\"at\":1")
    #expect(skipped["ok"] as? Bool == true, "\(skipped)")
    #expect(skipped["outcome"] as? String == "skipped #1 of counter")
    #expect(app.count == 18)
    _ = try app.command("skip", "\"at\":5")
    #expect(app.count == 8)
    let unskipped = try app.command("unskip", "\"at\":1")
    #expect(unskipped["ok"] as? Bool == true, "\(unskipped)")
    #expect(app.count == 10)
    app.store.actions.dispatch(action: .add(100))
    #expect(app.count == 110)
    _ = try app.command("unskip", "\"at\":5")
    #expect(app.count == 120)
    app.waitForLines(12)
    #expect(app.inspector.lines[7]?["steered"] as? String == "skip")
    #expect(app.inspector.lines[9]?["steered"] as? String == "unskip")
  }

  @Test("a skip names what it cannot skip: a command's line, another store's, a line not yet written")
  func skipRefusals() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    app.store.actions.dispatch(action: .add(1))
    app.readOnly.actions.dispatch(action: .add(1))
    app.waitForLines(2)
    _ = try app.command("jump", "\"to\":0")
    app.waitForLines(3)
    let own = try app.command("skip", "\"at\":2")
    #expect(own["ok"] as? Bool == false)
    #expect((own["error"] as? String)?.contains("the Inspector's jump") == true, "\(own)")
    let other = try app.command("skip", "\"at\":1")
    #expect((other["error"] as? String)?.contains("an action of shown, not of counter") == true, "\(other)")
    let later = try app.command("skip", "\"at\":99")
    #expect((later["error"] as? String)?.contains("no line 99 yet") == true, "\(later)")
    let missing = try app.command("skip")
    #expect((missing["error"] as? String)?.contains("needs \"at\"") == true, "\(missing)")
  }

  @Test("dispatch decodes the action with its Decodable: a wrong payload is answered with where it is wrong")
  func dispatch() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    let done = try app.command("dispatch", "\"action\":{\"add\":{\"_0\":5}}")
    #expect(done["ok"] as? Bool == true, "\(done)")
    #expect(done["outcome"] as? String == "dispatched add to counter")
    #expect(app.count == 5)
    let wrongType = try app.command("dispatch", "\"action\":{\"add\":{\"_0\":\"five\"}}")
    #expect(wrongType["ok"] as? Bool == false)
    #expect(
      wrongType["error"] as? String == "the action is not a CounterAction (\"add._0\" is not a whole number)",
      "\(wrongType)")
    let wrongCase = try app.command("dispatch", "\"action\":{\"multiply\":{\"_0\":2}}")
    #expect((wrongCase["error"] as? String)?.contains("no case `multiply` in CounterAction") == true, "\(wrongCase)")
    let missing = try app.command("dispatch", "\"action\":{\"add\":{}}")
    #expect((missing["error"] as? String)?.contains("\"add._0\" is missing") == true, "\(missing)")
    #expect(app.count == 5)
    app.waitForLines(1)
    #expect(app.inspector.lines[0]?["steered"] as? String == "dispatch")
    #expect(app.inspector.lines.count == 1)
  }

  @Test("pause stops the lines of every store; resume reports what was not sent as one gap")
  func pauseAndResume() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    app.store.actions.dispatch(action: .add(1))
    app.waitForLines(1)
    #expect(try app.command("pause")["ok"] as? Bool == true)
    app.store.actions.dispatch(action: .add(1))
    app.readOnly.actions.dispatch(action: .add(1))
    app.store.actions.dispatch(action: .add(1))
    let resumed = try app.command("resume")
    #expect(resumed["outcome"] as? String == "resumed: 3 lines were not sent")
    app.store.actions.dispatch(action: .add(1))
    app.waitForLines(2)
    let gaps = app.inspector.messages(ofType: "gap")
    #expect(gaps.count == 1)
    #expect(gaps.first?["from"] as? Int == 1)
    #expect(gaps.first?["count"] as? Int == 3)
    #expect(gaps.first?["reason"] as? String == "paused")
    #expect(app.inspector.lines[4]?["state"] as? Int == 4)
    // Steering still reads the lines written while paused.
    _ = try app.command("jump", "\"to\":1")
    #expect(app.count == 2)
  }

  @Test("import sets each steerable store to the state after its last imported line")
  func importSession() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    app.store.actions.dispatch(action: .add(1))
    let withState =
      "[{\"action\":{\"add\":{\"_0\":40}},\"outcome\":\"committed\",\"state\":40,\"store\":\"counter\",\"time\":\"2026-01-01T00:00:00.000Z\"},"
      + "{\"action\":{\"add\":{\"_0\":2}},\"outcome\":\"committed\",\"state\":42,\"store\":\"counter\",\"time\":\"2026-01-01T00:00:00.001Z\"},"
      + "{\"action\":{\"add\":{\"_0\":9}},\"outcome\":\"committed\",\"state\":9,\"store\":\"shown\",\"time\":\"2026-01-01T00:00:00.002Z\"}]"
    let imported = try app.command("import", "\"lines\":\(withState)")
    #expect(imported["ok"] as? Bool == true, "\(imported)")
    #expect(imported["outcome"] as? String == "imported 3 lines: counter took the state after line 2 of the import")
    #expect(app.count == 42)
    #expect(app.readOnly.computed.count.value == 0)
    let withoutState =
      "[{\"action\":{\"add\":{\"_0\":3}},\"outcome\":\"committed\",\"store\":\"counter\",\"time\":\"2026-01-01T00:00:00.000Z\"},"
      + "{\"action\":{\"add\":{\"_0\":-1}},\"outcome\":\"cancelled\",\"store\":\"counter\",\"time\":\"2026-01-01T00:00:00.001Z\"},"
      + "{\"action\":{\"add\":{\"_0\":4}},\"outcome\":\"committed\",\"store\":\"counter\",\"time\":\"2026-01-01T00:00:00.002Z\"}]"
    #expect(try app.command("import", "\"lines\":\(withoutState)")["ok"] as? Bool == true)
    #expect(app.count == 7)
    app.store.actions.dispatch(action: .add(1))
    _ = try app.command("skip", "\"at\":0")
    #expect(app.count == 8, "the import resets the timeline: the action before it changes nothing after it")
    let wrong =
      "[{\"action\":{\"add\":{\"_0\":\"x\"}},\"outcome\":\"committed\",\"store\":\"counter\",\"time\":\"2026-01-01T00:00:00.000Z\"}]"
    let refused = try app.command("import", "\"lines\":\(wrong)")
    #expect(refused["ok"] as? Bool == false)
    #expect((refused["error"] as? String)?.hasPrefix("line 1 of the import: the action is not a CounterAction") == true)
    let none = try app.command("import", "\"lines\":[{\"store\":\"elsewhere\",\"outcome\":\"committed\",\"action\":1}]")
    #expect((none["error"] as? String)?.contains("no line of the import") == true, "\(none)")
    #expect(app.count == 8)
  }

  @Test("a read-only store, a store the app does not have, and a command it does not know get ok false")
  func refusedCommands() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    let readOnly = try app.command("jump", "\"to\":0", store: "shown")
    #expect(readOnly["ok"] as? Bool == false)
    #expect(readOnly["error"] as? String == "the store shown is read-only: the app does not let the Inspector steer it")
    let unknown = try app.command("present", store: "nowhere")
    #expect(unknown["error"] as? String == "the app has no store nowhere")
    let strange = try app.command("explode")
    #expect(strange["error"] as? String == "the app knows no command explode")
    // The hello names the stores offered by then; a `stores` message names them as they come.
    func announced() -> [[String: Any]] {
      let messages = app.inspector.messages.filter { ["hello", "stores"].contains($0["type"] as? String) }
      return messages.last?["stores"] as? [[String: Any]] ?? []
    }
    #expect(app.inspector.waitUntil { announced().count == 2 })
    let stores = announced()
    try #require(stores.count == 2)
    #expect(stores[0]["label"] as? String == "counter")
    #expect(stores[0]["state"] as? String == "CounterState")
    #expect(stores[0]["steerable"] as? Bool == true)
    #expect(stores[1]["steerable"] as? Bool == false)
  }

  @Test(
    "a store steered in the place of another has a timeline of its own: the lines the first wrote before it are not in it, even those still on their way"
  )
  func storeSteeredAgainStartsAfterTheLinesBeforeIt() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    for round in 1...5 {
      let first = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate,
        middlewares: [app.connection.log.middleware(label: "counter", snapshots: .snapshot)])
      app.connection.steer(first, label: "counter", mutations: .init(), scratch: { CounterState() })
      first.actions.dispatch(action: .add(1))
      app.connection.log.flush()
      // The log's queue is idle a while: the line of the next action may wait there for it.
      usleep(100_000)
      first.actions.dispatch(action: .add(5))
      let second = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate,
        middlewares: [app.connection.log.middleware(label: "counter", snapshots: .snapshot)])
      app.connection.steer(second, label: "counter", mutations: .init(), scratch: { CounterState() })
      second.actions.dispatch(action: .add(1))
      app.connection.log.flush()
      let last = app.connection.statistics.linesWritten - 1
      app.waitForLines(last + 1)
      #expect(app.inspector.lines[last]?["state"] as? Int == 1, "round \(round)")
      // Without its one action, the second store is as it was when it was steered: empty.
      let skipped = try app.command("skip", "\"at\":\(last)")
      #expect(skipped["ok"] as? Bool == true, "round \(round): \(skipped)")
      #expect(
        second.computed.count.value == 0, "round \(round): skipping its only action left \(second.computed.count.value)"
      )
      withExtendedLifetime(first) {}
    }
  }

  @Test("every command gets exactly one ack, many at once from the inspector")
  func oneAckEach() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    var ids: [Int] = []
    for index in 0..<40 {
      ids.append(
        app.inspector.command("\"store\":\"counter\",\"command\":\"dispatch\",\"action\":{\"add\":{\"_0\":\(index)}}"))
    }
    #expect(app.inspector.waitUntil { app.inspector.messages(ofType: "ack").count >= ids.count })
    let acks = app.inspector.messages(ofType: "ack")
    #expect(acks.count == ids.count)
    #expect(Set(acks.compactMap { $0["id"] as? Int }) == Set(ids))
    #expect(app.count == (0..<40).reduce(0, +))
  }
}
