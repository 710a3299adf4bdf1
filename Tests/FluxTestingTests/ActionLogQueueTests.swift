import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("ActionLog: the queue that encodes and writes")
struct ActionLogQueueTests {
  @Test("dispatch returns while its line is still being encoded: the committing thread encodes nothing")
  func committingThreadEncodesNothing() {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let gate = DispatchSemaphore(value: 0)
    let store = Store<GatedState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "g")])
    let returned = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      store.actions.dispatch(action: GatedAction(gate: gate))
      returned.signal()
    }
    let result = returned.wait(timeout: .now() + 10)
    gate.signal()  // lets the encoding go on, wherever it waits
    #expect(result == .success, "dispatch waited for its line to be encoded")
    if result != .success { returned.wait() }
    log.flush()
    #expect(lines.all.count == 1)
    #expect(lines.all.first?.contains(#""action":"gated""#) == true)
  }

  @Test("a full queue drops lines, and one line in their place says how many, from which stores, and when")
  func fullQueueWritesOneDroppedLine() throws {
    let lines = Lines()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let first = FirstTime()
    let output = ActionLogOutput { line in
      if first.set() {
        entered.signal()
        gate.wait()  // the first write waits: the queue fills behind it
      }
      lines.output.write(line)
    }
    let log = ActionLog(output: output, fields: .sequence, queueLimit: 2)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    store.actions.dispatch(action: .add(1))
    entered.wait()  // line 1 is being written
    for amount in 2...6 { store.actions.dispatch(action: .add(amount)) }  // 2 and 3 wait; 4, 5, 6 are dropped
    gate.signal()
    log.flush()  // the queue has room again
    store.actions.dispatch(action: .add(7))
    log.flush()
    let all = lines.all
    #expect(all.count == 5)
    let objects = try all.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    #expect(objects.map { $0["sequence"] as? Int } == [1, 2, 3, 4, 5])
    let actions = objects.map { ($0["action"] as? [String: Any])?["add"] as? [String: Any] }.map { $0?["_0"] as? Int }
    #expect(actions == [1, 2, 3, nil, 7])
    let dropped = objects[3]
    #expect(dropped["dropped"] as? Int == 3)
    #expect(dropped["stores"] as? [String] == ["c"])
    #expect(
      dropped["error"] as? String == "3 lines were dropped here: the log's queue held 2 lines waiting to be written")
    let firstTime = try #require(dropped["firstDroppedTime"] as? String)
    let lastTime = try #require(dropped["lastDroppedTime"] as? String)
    #expect(firstTime <= lastTime)
    // A log with lines missing is not replayed as if it were whole.
    #expect(throws: RecordingError.self) { try Recording(jsonLines: lines.text) }
  }

  @Test("flush racing commits on several threads: every line that ended before it is written when it returns")
  func flushRacingCommits() {
    for _ in 0..<10 {
      let lines = Lines()
      let log = ActionLog(output: lines.output)
      let stores = (0..<4).map { index in
        Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
      }
      let short = Counter()
      DispatchQueue.concurrentPerform(iterations: 4) { index in
        for amount in 1...300 {
          stores[index].actions.dispatch(action: .add(amount))
          if amount % 25 == 0 {
            log.flush()
            let written = lines.all.filter { $0.contains(#""store":"s\#(index)""#) }.count
            if written < amount { short.add() }
          }
        }
      }
      #expect(short.value == 0, "a flush returned before lines that ended before it were written")
      log.flush()
      #expect(lines.all.count == 1_200)
    }
  }

  @Test("finish() on two threads at once: both return after every line is in the file, with one outcome")
  func finishOnTwoThreads() throws {
    for round in 0..<10 {
      let url = FileManager.default.temporaryDirectory.appendingPathComponent("finish-\(UUID())-\(round).jsonl")
      defer { try? FileManager.default.removeItem(at: url) }
      let log = ActionLog(output: try .file(url))
      let stores = (0..<2).map { index in
        Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
      }
      DispatchQueue.concurrentPerform(iterations: 2) { index in
        for amount in 1...200 { stores[index].actions.dispatch(action: .add(amount)) }
      }
      let failures = Counter()
      DispatchQueue.concurrentPerform(iterations: 2) { _ in
        do { try log.finish() } catch { failures.add() }
      }
      #expect(failures.value == 0)
      #expect(try Recording(contentsOf: url).entries.count == 400)
    }
  }

  @Test("a store freed while its lines wait is freed at once, and its lines are still written")
  func storeFreedWhileItsLinesWait() {
    let lines = Lines()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let first = FirstTime()
    let output = ActionLogOutput { line in
      if first.set() {
        entered.signal()
        gate.wait()
      }
      lines.output.write(line)
    }
    let log = ActionLog(output: output)
    weak var freed: Store<CounterState>?
    do {
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
      freed = store
      for amount in 1...10 { store.actions.dispatch(action: .add(amount)) }
      entered.wait()
    }
    #expect(freed == nil, "a queued line kept its store alive")
    gate.signal()
    log.flush()
    #expect(lines.all.count == 10)
  }

  @Test("a log let go without flush() or finish() writes every line it queued before it goes")
  func logLetGoWritesItsLines() {
    for _ in 0..<5 {
      let lines = Lines()
      do {
        let log = ActionLog(
          output: ActionLogOutput { line in
            Thread.sleep(forTimeInterval: 0.0002)
            lines.output.write(line)
          })
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...100 { store.actions.dispatch(action: .add(amount)) }
      }
      #expect(lines.all.count == 100)
    }
  }

  @Test("a flood on several threads into a small queue: every action is a line or counted in a dropped line, in order")
  func floodIsAccountedFor() throws {
    for _ in 0..<3 {
      let lines = Lines()
      let output = ActionLogOutput { line in
        if line.hashValue & 7 == 0 { Thread.sleep(forTimeInterval: 0.0001) }
        lines.output.write(line)
      }
      let log = ActionLog(output: output, fields: .sequence, queueLimit: 50)
      let stores = (0..<4).map { index in
        Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
      }
      DispatchQueue.concurrentPerform(iterations: 4) { index in
        for amount in 1...2_000 { stores[index].actions.dispatch(action: .add(amount)) }
      }
      log.flush()
      var accounted = 0
      var lastAmount = [String: Int]()
      for (number, line) in lines.all.enumerated() {
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["sequence"] as? Int == number + 1)
        if let dropped = object["dropped"] as? Int {
          accounted += dropped
        } else {
          accounted += 1
          let store = try #require(object["store"] as? String)
          let amount = try #require(((object["action"] as? [String: Any])?["add"] as? [String: Any])?["_0"] as? Int)
          #expect(amount > lastAmount[store, default: 0], "\(store)'s lines out of order")
          lastAmount[store] = amount
        }
      }
      #expect(accounted == 8_000)
    }
  }
}

/// A state whose one action's encoding waits for a semaphore.
private final class GatedState: State {
  typealias Action = GatedAction
  typealias Mutations = GatedMutations
}

private struct GatedAction: Encodable, Sendable {
  let gate: DispatchSemaphore

  func encode(to encoder: any Encoder) throws {
    gate.wait()
    gate.signal()
    var container = encoder.singleValueContainer()
    try container.encode("gated")
  }
}

private struct GatedMutations: Mutations {
  func commit(action: GatedAction, state: GatedState) {}
}

/// True the first time it is set.
private final class FirstTime: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var isSet = false

  /// Sets the flag; whether this call set it.
  func set() -> Bool {
    lock.withLock {
      defer { isSet = true }
      return !isSet
    }
  }
}

/// A count that threads add to.
private final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var count = 0

  func add() { lock.withLock { count += 1 } }

  var value: Int { lock.withLock { count } }
}
