import FluxCore
import FluxDevtools
import Foundation
import Testing

/// A snapshot or an action that cannot be encoded: the line says why in words, not by a dump of
/// the value that could not be.
@Suite("An action log line whose state cannot be encoded")
struct ActionLogEncodingErrorTests {
  @Test("a state nested too deep to encode is named in words, and the line does not hold a dump of the value")
  func stateTooDeepToEncodeIsNamedInWords() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let payload = String(repeating: "p", count: 100_000)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [
        log.middleware(label: "c", snapshots: .encoding { _ in Nested.deep(600, payload: payload) })
      ])
    store.actions.dispatch(action: .add(1))
    log.flush()
    let line = try #require(lines.all.first)
    let entry = try #require(try Recording(jsonLines: line).entries.first)
    #expect(!entry.hasState)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    let stateError = try #require(object["stateError"] as? String)
    #expect(stateError.hasPrefix("the state could not be encoded: "))
    #expect(line.utf8.count < 2_000, "the line holds \(line.utf8.count) bytes")
    #expect(!stateError.contains(payload.prefix(100)))
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }
}

/// A value nested as deep as asked, with a payload at the bottom.
private indirect enum Nested: Encodable, Sendable {
  case leaf(String)
  case node(Nested)

  static func deep(_ depth: Int, payload: String) -> Nested {
    var value = Nested.leaf(payload)
    for _ in 0..<depth { value = .node(value) }
    return value
  }
}
