import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("ActionLog")
struct ActionLogTests {
  @Test("one JSON line per committed or cancelled action: store label, time, outcome, duration, action")
  func linesAreJSON() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeAmounts()), log.middleware(label: "counter")])
    store.actions.dispatch(action: .add(2))
    store.actions.dispatch(action: .add(-1))
    #expect(lines.all.count == 2)
    #expect(lines.all.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().allSatisfy { $0 != "\n" } })
    let first = try #require(
      JSONSerialization.jsonObject(with: Data(lines.all[0].utf8)) as? [String: Any])
    #expect(first["store"] as? String == "counter")
    #expect(first["outcome"] as? String == "committed")
    #expect(first["durationNanoseconds"] is NSNumber)
    #expect((first["time"] as? String)?.hasSuffix("Z") == true)
    let action = try #require(first["action"] as? [String: Any])
    #expect((action["add"] as? [String: Any])?["_0"] as? Int == 2)
    let second = try #require(
      JSONSerialization.jsonObject(with: Data(lines.all[1].utf8)) as? [String: Any])
    #expect(second["outcome"] as? String == "cancelled")
    #expect(second["durationNanoseconds"] == nil)
  }

  @Test("stores on several queues share one log: every line whole, each store's actions in order")
  func threadSafe() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let stores = (0..<4).map { index in
      Store<CounterState>(
        state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "log \(index)")),
        middlewares: [log.middleware(label: "store \(index)")])
    }
    let group = DispatchGroup()
    for store in stores {
      DispatchQueue.global().async(group: group) {
        for amount in 1...50 { store.actions.dispatch(action: .add(amount)) }
      }
    }
    await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
    for store in stores {
      await store.actions.dispatchAndWait(action: .reset)  // after the 50 adds: one queue per store
    }
    let recording = try Recording(jsonLines: lines.text)
    #expect(recording.entries.count == 4 * 51)
    for index in 0..<4 {
      let actions = try recording.entries.filter { $0.store == "store \(index)" }.map {
        try $0.action(as: CounterAction.self)
      }
      #expect(actions == (1...50).map { .add($0) } + [.reset])
    }
  }

  @Test("a file output writes each line as it comes")
  func fileOutput() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("action-log-\(UUID()).jsonl")
    defer { try? FileManager.default.removeItem(at: url) }
    let log = ActionLog(output: try .file(url))
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    store.actions.dispatch(action: .set(4))
    let recording = try Recording(contentsOf: url)
    #expect(try recording.entries.map { try $0.action(as: CounterAction.self) } == [.set(4)])
    #expect(recording.entries.first?.store == "c")
  }
}
