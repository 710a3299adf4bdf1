import FluxCore
import FluxTesting
import Foundation
import Testing

/// A counter store logged to `connection`.
func loggedCounter(_ connection: InspectorConnection, executor: Executor = .immediate) -> Store<CounterState> {
  let store = Store<CounterState>(
    state: .init(), mutations: .init(), executor: executor,
    middlewares: [connection.log.middleware(label: "counter", snapshots: .snapshot)])
  connection.steer(store, label: "counter", mutations: .init(), scratch: { CounterState() })
  return store
}

@Suite("Inspector connection: an inspector that misbehaves", .serialized)
struct InspectorFaultTests {
  @Test("nothing is attempted unless configured; a malformed variable is said once and ignored")
  func configuration() {
    let reports = Reports()
    let options = fastOptions(reports)
    #expect(InspectorConnection.fromEnvironment(environment: [:], options: options) == nil)
    #expect(InspectorConnection.fromEnvironment(environment: ["PATH": "/bin"], options: options) == nil)
    for _ in 0..<3 {
      #expect(InspectorConnection.fromEnvironment(environment: ["FLUX_INSPECTOR": "nonsense"], options: options) == nil)
    }
    #expect(
      InspectorConnection.fromEnvironment(environment: ["FLUX_INSPECTOR": "127.0.0.1:99999"], options: options) == nil)
    #expect(
      InspectorConnection.fromEnvironment(environment: ["FLUX_INSPECTOR_PAIRING": "K7QM-3XPA"], options: options)
        == nil)
    let said = reports.all
    #expect(said.filter { $0.contains("\"nonsense\" is not an address: expected HOST:PORT") }.count == 1, "\(said)")
    #expect(said.contains { $0.contains("\"127.0.0.1:99999\" is not an address") }, "\(said)")
    #expect(said.contains { $0.contains("FLUX_INSPECTOR_PAIRING is set, but FLUX_INSPECTOR is not") }, "\(said)")
    for address in ["127.0.0.1:9400", "localhost:1", "[::1]:65535"] {
      let connection = InspectorConnection.fromEnvironment(
        environment: ["FLUX_INSPECTOR": address, "FLUX_INSPECTOR_PAIRING": "ABCD"], options: options)
      #expect(connection != nil, "\(address)")
      connection?.close()
      #expect(connection?.phase == .closed)
    }
  }

  @Test("the pairing code goes in the hello when given, and only then")
  func pairingCode() throws {
    let inspector = try FakeInspector()
    let with = InspectorConnection(
      host: "127.0.0.1", port: inspector.port, pairingCode: "K7QM-3XPA", options: fastOptions())
    #expect(inspector.waitUntil { inspector.messages(ofType: "hello").count == 1 })
    with.close()
    let without = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions())
    #expect(inspector.waitUntil { inspector.messages(ofType: "hello").count == 2 })
    without.close()
    let hellos = inspector.messages(ofType: "hello")
    #expect(hellos[0]["pairing"] as? String == "K7QM-3XPA")
    #expect(hellos[1]["pairing"] == nil)
  }

  @Test("an idle app pings; an inspector that answers keeps its connection")
  func pings() throws {
    let inspector = try FakeInspector()
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions())
    defer { connection.close() }
    #expect(inspector.waitUntil { inspector.messages(ofType: "ping").count >= 8 })
    #expect(connection.phase == .connected)
    #expect(inspector.connectionCount == 1)
  }

  @Test("a half-open connection (welcomed, then silence) is closed after the silence limit, and made again")
  func halfOpen() throws {
    let reports = Reports()
    let inspector = try FakeInspector()
    inspector.setAnswersPings(false)
    let connection = InspectorConnection(
      host: "127.0.0.1", port: inspector.port, options: fastOptions(reports, silence: 0.8))
    defer { connection.close() }
    let counter = loggedCounter(connection)
    #expect(inspector.waitUntil { inspector.connectionCount >= 2 })
    #expect(reports.all.contains { $0.contains("said nothing for") }, "\(reports.all)")
    counter.actions.dispatch(action: .add(1))
    #expect(counter.computed.count.value == 1)
  }

  @Test("an inspector that accepts and never reads, nor answers the hello, is left after the handshake's time")
  func neverReads() throws {
    let reports = Reports()
    let inspector = try FakeInspector(behaviour: .neverRead)
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions(reports))
    defer { connection.close() }
    let counter = loggedCounter(connection)
    for _ in 0..<1000 { counter.actions.dispatch(action: .add(1)) }
    #expect(counter.computed.count.value == 1000)
    #expect(inspector.waitUntil { inspector.connectionCount >= 2 })
    #expect(reports.all.contains { $0.contains("no answer to the hello") }, "\(reports.all)")
  }

  @Test("an inspector killed mid-session: the app goes on, and continues its session when one is back")
  func killedAndBack() throws {
    let reports = Reports()
    let first = try FakeInspector()
    let port = first.port
    let connection = InspectorConnection(host: "127.0.0.1", port: port, options: fastOptions(reports))
    defer { connection.close() }
    let counter = loggedCounter(connection)
    for _ in 0..<10 { counter.actions.dispatch(action: .add(1)) }
    #expect(first.waitUntil { first.lines.count == 10 })
    first.kill()
    for _ in 0..<10 { counter.actions.dispatch(action: .add(1)) }
    #expect(counter.computed.count.value == 20)
    #expect(first.waitUntil { connection.phase != .connected })
    let second = try FakeInspector(port: port)
    second.setHolds(connection.session, 10)
    #expect(second.waitUntil { second.lines.count == 10 })
    let hello = try #require(second.messages(ofType: "hello").first)
    #expect(hello["session"] as? String == connection.session)
    #expect(Set(second.lines.keys) == Set(10..<20))
    #expect(second.lines[19]?["state"] as? Int == 20)
    second.kill()
    // A third that holds nothing: the app sends again every line it still holds.
    let third = try FakeInspector(port: port)
    #expect(third.waitUntil { third.lines.count == 20 })
    #expect(third.messages(ofType: "gap").isEmpty)
    third.kill()
  }

  @Test("lines written while no inspector is there fill the buffer; the rest are counted, and sent as a gap")
  func bufferFullWhileDisconnected() throws {
    let placeholder = try FakeInspector()
    let port = placeholder.port
    placeholder.kill()
    var options = fastOptions()
    options.bufferLines = 100
    let connection = InspectorConnection(host: "127.0.0.1", port: port, options: options)
    defer { connection.close() }
    let counter = loggedCounter(connection)
    for _ in 0..<1000 { counter.actions.dispatch(action: .add(1)) }
    connection.log.flush()
    #expect(counter.computed.count.value == 1000)
    #expect(connection.statistics.linesWritten == 1000)
    #expect(connection.statistics.linesNotKept == 900)
    let inspector = try FakeInspector(port: port)
    #expect(inspector.waitUntil { inspector.lines.count == 100 })
    let gap = try #require(inspector.messages(ofType: "gap").first)
    #expect(gap["from"] as? Int == 100)
    #expect(gap["count"] as? Int == 900)
    #expect(gap["reason"] as? String == "disconnected")
    counter.actions.dispatch(action: .add(1))
    #expect(inspector.waitUntil { inspector.lines[1000]?["state"] as? Int == 1001 })
  }

  @Test("a slow inspector: commits never wait; lines that do not fit are counted and sent as a gap later")
  func slowInspector() throws {
    let slow = try FakeInspector(behaviour: .slow(bytesPerSecond: 20_000))
    let port = slow.port
    var options = fastOptions()
    options.bufferLines = 200
    options.silenceLimit = 60
    let connection = InspectorConnection(host: "127.0.0.1", port: port, options: options)
    defer { connection.close() }
    let store = Store<BigState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [connection.log.middleware(label: "big", snapshots: .encoding { $0.items })])
    #expect(slow.waitUntil { connection.phase == .connected })
    for index in 0..<3000 { store.actions.dispatch(action: index) }
    connection.log.flush()
    #expect(store.computed.state.items.count == 64)
    let dropped = connection.statistics.linesNotKept
    #expect(dropped > 0)
    slow.kill()
    let quick = try FakeInspector(port: port)
    #expect(quick.waitUntil { quick.holds(connection.session) == 3000 })
    let gaps = quick.messages(ofType: "gap")
    #expect(gaps.contains { $0["reason"] as? String == "buffer" }, "\(gaps)")
    quick.kill()
  }

  @Test("garbage from the inspector: the app says what was wrong, closes, and connects again")
  func garbage() throws {
    let reports = Reports()
    let inspector = try FakeInspector()
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions(reports))
    defer { connection.close() }
    let garbage: [[UInt8]] = [
      Array("not json at all\n".utf8),
      Array("{\"type\":\"explode\"}\n".utf8),
      [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D, 0x0A],
      Array(("{\"type\":\"x-deep\",\"a\":" + String(repeating: "[", count: 100_000)).utf8) + [0x0A],
      Array("{\"type\":\"command\",\"store\":\"counter\",\"command\":\"present\"}\n".utf8),
      Array("{\"type\":\"welcome\",\"protocol\":1,\"have\":0}\n".utf8),
      Array("{\"type\":\"ping\",\"type\":\"pong\"}\n".utf8),
    ]
    for (index, bytes) in garbage.enumerated() {
      #expect(inspector.waitUntil { inspector.connectionCount == index + 1 && connection.phase == .connected })
      inspector.sendBytes(bytes)
      #expect(inspector.waitUntil { inspector.messages(ofType: "error").count == index + 1 }, "\(index)")
    }
    #expect(inspector.waitUntil { inspector.connectionCount == garbage.count + 1 })
    let errors = inspector.messages(ofType: "error").compactMap { $0["message"] as? String }
    #expect(errors[0].hasPrefix("a message that cannot be read (the text is not JSON"), "\(errors)")
    #expect(errors[1] == "a message of an unknown type: explode")
    #expect(errors[2] == "a message that cannot be read (the text is not UTF-8)")
    #expect(errors[3].contains("nest more than 512 deep"), "\(errors[3])")
    #expect(errors[4].contains("a command without \"id\""), "\(errors[4])")
    #expect(errors[5] == "a second welcome")
    #expect(errors[6].contains("the key \"type\" is written twice"), "\(errors[6])")
  }

  @Test("a 10 MB message of a newer protocol is read and ignored; a line past 16 MiB ends the connection")
  func longMessages() throws {
    let inspector = try FakeInspector()
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions())
    defer { connection.close() }
    let counter = loggedCounter(connection)
    #expect(inspector.waitUntil { connection.phase == .connected })
    let padding = String(repeating: "x", count: 10_000_000)
    inspector.send("{\"type\":\"x-future\",\"padding\":\"\(padding)\"}")
    inspector.send(
      "{\"type\":\"command\",\"id\":1,\"store\":\"counter\",\"command\":\"dispatch\",\"action\":{\"add\":{\"_0\":2}}}")
    // Long waits: reading 10 MB takes the thread sanitizer on a loaded machine a while (a bound
    // for a test that would hang, not a measure).
    #expect(inspector.ack(1, timeout: 180)?["ok"] as? Bool == true)
    #expect(counter.computed.count.value == 2)
    let hugeCommand =
      "{\"type\":\"command\",\"id\":2,\"store\":\"counter\",\"command\":\"dispatch\",\"action\":{\"add\":{\"_0\":3}},\"padding\":\"\(padding)\"}"
    inspector.send(hugeCommand)
    #expect(inspector.ack(2, timeout: 180)?["ok"] as? Bool == true)
    #expect(inspector.connectionCount == 1)
    inspector.sendBytes(Array(String(repeating: "y", count: 17 << 20).utf8))
    #expect(inspector.waitUntil(timeout: 180) { inspector.messages(ofType: "error").count == 1 })
    #expect(inspector.messages(ofType: "error").first?["message"] as? String == "a message longer than 16 MiB")
    #expect(inspector.waitUntil(timeout: 180) { inspector.connectionCount == 2 })
    #expect(counter.computed.count.value == 5)
  }

  @Test("numbers out of range in a command are refused in words, never trapped on")
  func numbersOutOfRange() throws {
    let app = try SteeredCounter()
    defer { app.connection.close() }
    for value in ["99999999999999999999", "-1", "1.5", "1e3", "\"3\"", "9007199254740992"] {
      let answer = try app.command("jump", "\"to\":\(value)")
      #expect(answer["ok"] as? Bool == false)
      #expect(answer["error"] as? String == "jump needs \"to\", the number of a line", "\(value)")
    }
    let id = "9007199254740991"
    app.inspector.send("{\"type\":\"command\",\"id\":\(id),\"store\":\"counter\",\"command\":\"present\"}")
    #expect(app.inspector.waitUntil { app.inspector.messages(ofType: "ack").contains { "\($0["id"] ?? "")" == id } })
  }

  @Test("a refusal is said once, and the app tries again no faster than its backoff")
  func refused() throws {
    let reports = Reports()
    let inspector = try FakeInspector(behaviour: .refuse("the pairing code is wrong"))
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions(reports))
    defer { connection.close() }
    #expect(inspector.waitUntil { connection.statistics.refusals >= 4 })
    let refusals = reports.all.filter { $0.contains("refused the app: the pairing code is wrong") }
    #expect(refusals.count == 1, "\(reports.all)")
    #expect(connection.statistics.connections == 0)
  }

  @Test("close ends the connection for good; lines written after it are kept, never sent")
  func close() throws {
    let inspector = try FakeInspector()
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions())
    let counter = loggedCounter(connection)
    counter.actions.dispatch(action: .add(1))
    #expect(connection.send(waitingAtMost: 20))
    connection.close()
    #expect(connection.phase == .closed)
    counter.actions.dispatch(action: .add(1))
    connection.log.flush()
    // `send` waits for the line to be written to the socket, not read: the inspector reads on its
    // own thread. Once it has read to the connection's end, it holds everything ever sent on it.
    #expect(inspector.waitUntil { inspector.openConnections == 0 })
    #expect(inspector.lines.count == 1)
    #expect(inspector.connectionCount == 1)
    connection.close()
  }
}

/// A state of 64 items of 100 bytes each, whose every action changes one: lines of about 8 KB.
final class BigState: State {
  typealias Action = Int
  typealias Mutations = BigMutations

  private let lock = NSLock()
  // Guarded by `lock`.
  nonisolated(unsafe) private var storage = Array(repeating: String(repeating: "a", count: 100), count: 64)

  var items: [String] {
    lock.withLock { storage }
  }

  func change(_ index: Int) {
    lock.withLock { storage[index % 64] = String(repeating: "b", count: 99) + String(index % 10) }
  }
}

struct BigMutations: Mutations {
  func commit(action: Int, state: BigState) {
    state.change(action)
  }
}
