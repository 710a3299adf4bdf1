import FluxCore
import FluxTesting
import Foundation
import Testing

/// A store whose state is not `Codable`, offered to an inspector read-only, with `.mirror` snapshots.
@Suite("Mirror snapshots, live", .serialized)
struct MirrorSnapshotLiveTests {
  @Test("a store whose state is not Codable is offered read-only and streams its states as Mirror snapshots")
  func storeOfferedReadOnlyWithMirrorSnapshots() throws {
    let inspector = try FakeInspector()
    let connection = InspectorConnection(
      host: "127.0.0.1", port: inspector.port, appName: "tests", options: fastOptions())
    defer { connection.close() }
    let garden = Store<GardenState>(
      state: GardenState(), mutations: .init(), executor: .immediate,
      middlewares: [connection.log.middleware(label: "garden", snapshots: .mirror)])
    connection.offer(garden, label: "garden")
    #expect(inspector.waitUntil { connection.phase == .connected })
    garden.actions.dispatch(action: .rain(millimetres: 3))
    garden.actions.dispatch(action: .plant(bed: 0, .grass))
    connection.log.flush()
    #expect(inspector.waitUntil { inspector.lines.count == 2 })
    // The stores as the app last named them: in its hello, or in a `stores` message after it
    // when the store was offered once connected.
    let named = { (inspector.messages(ofType: "hello") + inspector.messages(ofType: "stores")).last?["stores"] }
    #expect(inspector.waitUntil { (named() as? [[String: Any]])?.count == 1 })
    let stores = try #require(named() as? [[String: Any]])
    #expect(stores.first?["label"] as? String == "garden")
    #expect(stores.first?["steerable"] as? Bool == false)
    let line = try #require(inspector.lines[1])
    #expect(line["state"] == nil)
    let state = try #require(line["stateMirror"] as? [String: Any])
    #expect(state["type"] as? String == "GardenState")
    let fields = try #require(state["fields"] as? [String: Any])
    #expect(((fields["visits"] as? [String: Any])?["fields"] as? [String: Any])?["value"] as? Int == 2)
    let id = inspector.command(#""store":"garden","command":"jump","to":0"#)
    let answer = try #require(inspector.ack(id))
    #expect(answer["ok"] as? Bool == false)
    #expect(answer["error"] as? String == "the store garden is read-only: the app does not let the Inspector steer it")
    withExtendedLifetime(garden) {}
  }
}
