import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("ActionLog: the queue at its edges")
struct ActionLogQueueEdgeTests {
  @Test("a log let go on the queue of another log still waits for its lines before it goes")
  func logLetGoOnAnotherLogsQueueWaits() {
    for _ in 0..<3 {
      let slowLines = Lines()
      let held = Held<ActionLog>()
      do {
        let slow = ActionLog(
          output: ActionLogOutput { line in
            Thread.sleep(forTimeInterval: 0.001)
            slowLines.output.write(line)
          })
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [slow.middleware(label: "slow")])
        for amount in 1...30 { store.actions.dispatch(action: .add(amount)) }
        held.put(slow)
      }
      // The other log's output lets go of the last reference to the slow log: its deinit runs on
      // the other log's queue.
      let other = ActionLog(output: ActionLogOutput { _ in held.take() })
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [other.middleware(label: "other")])
      store.actions.dispatch(action: .add(1))
      other.flush()
      #expect(held.isEmpty)
      #expect(slowLines.all.count == 30, "the slow log went before its lines were written")
      _ = slowLines.waitForCount(30)
    }
  }

  @Test(
    "commits on several threads racing flush(), writeFlightRecord() and finish(): the file holds whole lines, numbered in order, each store's in order, none twice",
    arguments: [false, true])
  func commitsRacingFinish(flightRecorder: Bool) throws {
    for round in 0..<8 {
      let url = FileManager.default.temporaryDirectory.appendingPathComponent("race-\(UUID())-\(round).jsonl")
      defer { try? FileManager.default.removeItem(at: url) }
      let output = try ActionLogOutput.file(url)
      let log =
        flightRecorder
        ? ActionLog(output: output, fields: .sequence, flightRecorder: 50)
        : ActionLog(output: output, fields: .sequence, queueLimit: 64)
      let stores = (0..<3).map { index in
        Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
      }
      let failures = LockedCount()
      DispatchQueue.concurrentPerform(iterations: 5) { index in
        switch index {
        case 0..<3:
          for amount in 1...400 { stores[index].actions.dispatch(action: .add(amount)) }
        case 3:
          for turn in 0..<40 {
            if turn % 2 == 0 { log.flush() } else { log.writeFlightRecord() }
            Thread.sleep(forTimeInterval: 0.0002)
          }
        default:
          Thread.sleep(forTimeInterval: 0.002 * Double(round % 4))
          do { try log.finish() } catch { failures.add() }
        }
      }
      #expect(throws: Never.self) { try log.finish() }  // the first one's outcome: no write failed
      let text = try String(contentsOf: url, encoding: .utf8)
      #expect(text.isEmpty || text.hasSuffix("\n"))
      var last = [String: Int]()
      for (number, line) in text.split(separator: "\n").enumerated() {
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["sequence"] as? Int == number + 1)
        if object["dropped"] != nil { continue }
        let store = try #require(object["store"] as? String)
        let amount = try #require(((object["action"] as? [String: Any])?["add"] as? [String: Any])?["_0"] as? Int)
        #expect(amount > last[store, default: 0], "\(store)'s lines out of order, or twice")
        last[store] = amount
      }
      #expect(failures.value == 0)
      // A line that came after finish() is reported, not written.
      if let failure = output.failure {
        #expect(failure.cause == "a line came after the log was finished; it is not written")
      }
    }
  }

  #if os(Linux)
    @Test("flush() or finish() from the log's own output stops the process and says why, instead of waiting for ever")
    func flushFromItsOwnOutputStops() async {
      let flushed = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        ActionLogQueueEdgeTests.callFromItsOwnOutput(finishes: false)
      }
      let finished = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        ActionLogQueueEdgeTests.callFromItsOwnOutput(finishes: true)
      }
      for result in [flushed, finished] {
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ActionLog.flush() was called from the log's own output"), "\(message)")
      }
    }

    @Test("a flight recorder of the largest capacity takes memory for the lines it holds, not for its capacity")
    func largeFlightRecorderTakesMemoryAsItFills() async {
      // In a process of its own, so that the resident size is this test's alone.
      await #expect(processExitsWith: .success) {
        let before = ActionLogQueueEdgeTests.residentKilobytes()
        let log = ActionLog(output: ActionLogOutput { _ in }, fields: [], flightRecorder: Int.max)
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...1_000 { store.actions.dispatch(action: .add(amount)) }
        let grown = ActionLogQueueEdgeTests.residentKilobytes() - before
        // 10,000,000 slots made at once take about 500 MB.
        withExtendedLifetime((log, store)) { exit(grown < 100_000 ? 0 : 1) }
      }
    }

    /// The resident size of this process, in kilobytes.
    static func residentKilobytes() -> Int {
      let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
      let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
      return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Writes a line to a log whose output calls `flush()` or `finish()` of that log.
    static func callFromItsOwnOutput(finishes: Bool) {
      let held = Held<ActionLog>()
      let log = ActionLog(
        output: ActionLogOutput { _ in
          if finishes { try? held.value?.finish() } else { held.value?.flush() }
        })
      held.put(log)
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
      store.actions.dispatch(action: .add(1))
      log.flush()
      withExtendedLifetime(store) {}
    }

    @Test(
      "a child forked from a process with a flight recorder returns from writeFlightRecord() and exit, writing none of its parent's lines"
    )
    func forkedChildWritesNothingOfItsParent() async throws {
      let url = FlightRecorderTests.childLog("fork")
      defer { try? FileManager.default.removeItem(at: url) }
      await #expect(processExitsWith: .success) {
        let log = try ActionLog(
          output: .file(FlightRecorderTests.childLog("fork", parent: true)), fields: [], flightRecorder: 10)
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...3 { store.actions.dispatch(action: .add(amount)) }
        let child = fork()
        if child == 0 {
          log.writeFlightRecord()
          exit(0)  // as a child whose exec failed may
        }
        waitForChildToEndByItself(child)
        withExtendedLifetime((log, store)) { exit(0) }
      }
      let text = try String(contentsOf: url, encoding: .utf8)
      let amounts = try Recording(jsonLines: text).entries.map { try $0.action(as: CounterAction.self) }
      #expect(amounts == (1...3).map { .add($0) })
    }
  #endif
}

/// One value, that one thread puts and another takes (and lets go of, outside the lock).
final class Held<Value: AnyObject>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var stored: Value?

  func put(_ value: Value) { lock.withLock { stored = value } }

  func take() {
    let taken = lock.withLock {
      defer { stored = nil }
      return stored
    }
    withExtendedLifetime(taken) {}
  }

  var isEmpty: Bool { lock.withLock { stored == nil } }

  var value: Value? { lock.withLock { stored } }
}

/// A count that threads add to.
private final class LockedCount: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var count = 0

  func add() { lock.withLock { count += 1 } }

  var value: Int { lock.withLock { count } }
}
