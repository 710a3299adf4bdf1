import FluxCore
import FluxTesting
import Foundation
import Testing

/// What a connection said on its report, for a test to read.
final class Reports: @unchecked Sendable {
  private let lock = NSLock()
  private var said: [String] = []

  var all: [String] { lock.withLock { said } }

  func add(_ message: String) {
    lock.withLock { said.append(message) }
  }
}

/// Options with the protocol's times made short, so that the tests of backoff end soon (and of
/// silence, with `silence`); and the reports kept.
func fastOptions(_ reports: Reports = Reports(), silence: Double = 30) -> InspectorConnection.Options {
  var options = InspectorConnection.Options()
  options.pingInterval = 0.2
  options.silenceLimit = silence
  options.handshakeTimeout = 1
  options.initialBackoff = 0.02
  options.maximumBackoff = 0.1
  options.commitTimeout = 2
  options.report = { reports.add($0) }
  return options
}

@Suite("Inspector connection", .serialized)
struct InspectorConnectionTests {
  @Test("an app says hello with its session, pid, platform and stores, then streams its log's lines from n 0")
  func helloAndLines() throws {
    let inspector = try FakeInspector()
    let connection = InspectorConnection(
      host: "127.0.0.1", port: inspector.port, appName: "tests", options: fastOptions())
    defer { connection.close() }
    let counter = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [connection.log.middleware(label: "counter", snapshots: .snapshot)])
    connection.steer(counter, label: "counter", mutations: .init(), scratch: { CounterState() })
    let other = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [connection.log.middleware(label: "other")])
    connection.offer(other, label: "other")
    for amount in 1...5 { counter.actions.dispatch(action: .add(amount)) }
    other.actions.dispatch(action: .add(7))
    #expect(inspector.waitUntil { inspector.lines.count == 6 })
    let hello = try #require(inspector.messages.first)
    #expect(hello["type"] as? String == "hello")
    #expect(hello["protocol"] as? Int == 1)
    #expect(hello["app"] as? String == "tests")
    #expect(hello["session"] as? String == connection.session)
    #expect(hello["pid"] as? Int == Int(getpid()))
    #expect(hello["platform"] as? String != nil)
    let lines = inspector.lines
    #expect(lines[0]?["store"] as? String == "counter")
    #expect(lines[4]?["state"] as? Int == 15)
    #expect(lines[5]?["store"] as? String == "other")
    #expect(connection.phase == .connected)
    withExtendedLifetime((counter, other)) {}
  }
}
