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
    log.flush()  // the log's queue writes the lines
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
    log.flush()  // a line may still be on its way (the log's queue) after its action's commit
    let recording = try Recording(jsonLines: lines.text)
    #expect(recording.entries.count == 4 * 51)
    for index in 0..<4 {
      let actions = try recording.entries.filter { $0.store == "store \(index)" }.map {
        try $0.action(as: CounterAction.self)
      }
      #expect(actions == (1...50).map { .add($0) } + [.reset])
    }
  }

  @Test("a file output writes each line at its path as it comes, and closes the file when finished")
  func fileOutput() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("action-log-\(UUID()).jsonl")
    defer { try? FileManager.default.removeItem(at: url) }
    let log = ActionLog(output: try .file(url))
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    store.actions.dispatch(action: .set(4))
    log.flush()
    #expect(try Recording(contentsOf: url).entries.map { try $0.action(as: CounterAction.self) } == [.set(4)])
    try log.finish()
    let recording = try Recording(contentsOf: url)
    #expect(try recording.entries.map { try $0.action(as: CounterAction.self) } == [.set(4)])
    #expect(recording.entries.first?.store == "c")
  }

  @Test("the output runs with no lock of the log held: it may dispatch to another store that logs there")
  func outputMayDispatchToALoggedStore() {
    let lines = Lines()
    let viewer = Slot<Store<CounterState>>()
    let log = ActionLog(
      output: ActionLogOutput { line in
        lines.output.write(line)
        if line.contains(#""store":"app""#) { viewer.value?.actions.dispatch(action: .add(1)) }
      })
    let app = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "app")])
    viewer.value = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "viewer")])
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      app.actions.dispatch(action: .add(1))
      app.actions.dispatch(action: .add(2))
      done.signal()
    }
    #expect(done.wait(timeout: .now() + 10) == .success, "deadlock: the output ran under the log's lock")
    #expect(lines.waitForCount(4))
    // In the order the actions ended: each viewer line after the app line whose write caused it.
    let stores = lines.all.map { $0.contains(#""store":"app""#) ? "app" : "viewer" }
    #expect(stores.count == 4)
    for end in stores.indices {
      let before = stores[...end]
      #expect(before.filter { $0 == "viewer" }.count <= before.filter { $0 == "app" }.count, "\(stores)")
    }
    withExtendedLifetime(app) {}
  }

  @Test("lines are in the order their actions ended, even when an earlier one takes long to encode")
  func orderOfEnding() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let (slow, slowEnded, fast) = Self.slowAndFastStores(logging: log)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      slow.actions.dispatch(action: .slowToEncode)  // ends, then encodes for 100 ms
      done.signal()
    }
    slowEnded.wait()
    Thread.sleep(forTimeInterval: 0.01)  // the slow line's turn is taken: ActionLog's middleware runs next
    fast.actions.dispatch(action: .add(1))  // ends later, encodes at once
    done.wait()
    #expect(lines.waitForCount(2))  // the log's queue may write the later line
    let recording = try Recording(jsonLines: lines.text)
    #expect(recording.entries.map(\.store) == ["slow", "fast"])
    #expect(recording.entries.map(\.time) == recording.entries.map(\.time).sorted())
  }

  @Test("stores on several threads share one log: every turn written once, in turn order")
  func turnsUnderRace() throws {
    for _ in 0..<5 {
      let lines = Lines()
      let log = ActionLog(output: lines.output)
      let stores = (0..<4).map { index in
        Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
      }
      DispatchQueue.concurrentPerform(iterations: 4) { index in
        for amount in 1...200 { stores[index].actions.dispatch(action: .add(amount)) }
      }
      log.flush()  // the log's queue may still be writing
      #expect(lines.all.count == 800)
      let recording = try Recording(jsonLines: lines.text)
      #expect(recording.entries.count == 800)
      #expect(recording.entries.map(\.time) == recording.entries.map(\.time).sorted())
      for index in 0..<4 {
        let actions = try recording.entries.filter { $0.store == "s\(index)" }.map {
          try $0.action(as: CounterAction.self)
        }
        #expect(actions == (1...200).map { .add($0) })
      }
    }
  }

  @Test("a thread writes no line that ended after its own: a busy store never keeps another's executor writing")
  func writerStopsAtItsOwnLine() {
    let lines = Lines()
    let quietWriting = DispatchSemaphore(value: 0)
    let slowOutput = ActionLogOutput { line in
      if line.contains(#""store":"quiet""#) {
        quietWriting.signal()
        Thread.sleep(forTimeInterval: 0.05)  // the busy store's lines pile up meanwhile
      } else {
        Thread.sleep(forTimeInterval: 0.001)
      }
      lines.output.write(line)
    }
    let log = ActionLog(output: slowOutput)
    let busy = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "busy")])
    let quiet = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "quiet")])
    let busyDone = DispatchSemaphore(value: 0)
    Thread {
      quietWriting.wait()
      for _ in 0..<1_000 { busy.actions.dispatch(action: .add(1)) }  // returns at once: another writes
      busyDone.signal()
    }.start()
    let start = DispatchTime.now().uptimeNanoseconds
    quiet.actions.dispatch(action: .add(1))  // writes its own line, then hands the rest on
    let quietTook = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    busyDone.wait()
    // Writing the busy store's lines too would have taken 1 s more.
    #expect(quietTook < 0.6, "the quiet store's dispatch took \(quietTook) s")
    #expect(lines.waitForCount(1_001, seconds: 30))
    #expect(lines.all.first?.contains(#""store":"quiet""#) == true)
  }
  @Test("a committing thread writes no line, not even its own: the log's queue writes them all, in order")
  func committingThreadWritesNoLine() {
    let lines = Lines()
    let writtenOnSlowThread = Slot<Int>()
    let slowThread = Slot<pthread_t>()
    let output = ActionLogOutput { line in
      if let id = slowThread.value, pthread_equal(pthread_self(), id) != 0 {
        writtenOnSlowThread.value = (writtenOnSlowThread.value ?? 0) + 1
      }
      lines.output.write(line)
    }
    let log = ActionLog(output: output)
    let (slow, slowEnded, fast) = Self.slowAndFastStores(logging: log)
    let done = DispatchSemaphore(value: 0)
    Thread {
      slowThread.value = pthread_self()
      slow.actions.dispatch(action: .slowToEncode)  // queues its line, which takes 100 ms to encode
      slowThread.value = nil  // a thread made later may get the same identity
      done.signal()
    }.start()
    slowEnded.wait()
    Thread.sleep(forTimeInterval: 0.01)
    for amount in 1...200 { fast.actions.dispatch(action: .add(amount)) }  // lines 2…201 wait for 1
    done.wait()
    #expect(lines.waitForCount(201))
    #expect(writtenOnSlowThread.value == nil, "the slow store's thread wrote \(writtenOnSlowThread.value ?? 0) lines")
    #expect(lines.all.first?.contains(#""store":"slow""#) == true)
  }

  @Test("flush() returns once every line of an action that ended is written, those on the log's queue included")
  func flushWritesWhatIsQueued() {
    let lines = Lines()
    let output = ActionLogOutput { line in
      if line.contains(#""store":"fast""#) { Thread.sleep(forTimeInterval: 0.002) }  // 200 lines: 0.4 s
      lines.output.write(line)
    }
    let log = ActionLog(output: output)
    let (slow, _, fast) = Self.slowAndFastStores(logging: log)
    let done = DispatchSemaphore(value: 0)
    let encoding = DispatchSemaphore(value: 0)
    Thread {
      slow.actions.dispatch(action: .signalThenEncodeSlowly(encoding))
      done.signal()
    }.start()
    encoding.wait()  // turn 0 is taken
    for amount in 1...200 { fast.actions.dispatch(action: .add(amount)) }  // turns 1…200 wait for 0
    done.wait()  // the slow store's thread wrote its line and handed the other 200 to the queue
    log.flush()
    #expect(lines.all.count == 201)
  }

  @Test("flush() waits for a line still being encoded, and returns at once when nothing waits")
  func flushWaitsForEncoding() {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    log.flush()  // nothing logged yet
    let (slow, _, _) = Self.slowAndFastStores(logging: log)
    let encoding = DispatchSemaphore(value: 0)
    Thread { slow.actions.dispatch(action: .signalThenEncodeSlowly(encoding)) }.start()
    encoding.wait()  // the line has its turn, and takes 0.1 s more to encode
    log.flush()
    #expect(lines.all.count == 1)
    log.flush()  // everything is written
  }

  @Test("rule 17: a file output keeps an existing file whole beside its path, and writes the new log at the path")
  func inv17_fileOutputKeepsTheOldFileBeside() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID()).jsonl")
    let kept = URL(fileURLWithPath: url.path + ".1")
    defer {
      try? FileManager.default.removeItem(at: url)
      try? FileManager.default.removeItem(at: kept)
    }
    let old = Data(String(repeating: "x", count: 10_000).utf8)
    try old.write(to: url)
    let output = try ActionLogOutput.file(url)
    #expect(output.previousFile == kept)
    let log = ActionLog(output: output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    store.actions.dispatch(action: .add(1))
    log.flush()
    #expect(FileManager.default.contents(atPath: kept.path) == old)
    #expect(try Recording(contentsOf: url).entries.count == 1)
    try log.finish()
    #expect(try Recording(contentsOf: url).entries.count == 1)
    #expect(FileManager.default.contents(atPath: kept.path) == old)
  }
}

extension ActionLogTests {
  /// A store whose action takes 100 ms to encode, the semaphore it signals once that action is
  /// committed (before its line takes its turn), and a store whose actions encode at once; both
  /// on `.immediate`, logging to `log`.
  fileprivate static func slowAndFastStores(
    logging log: ActionLog
  ) -> (slow: Store<SlowState>, slowEnded: DispatchSemaphore, fast: Store<CounterState>) {
    let slowEnded = DispatchSemaphore(value: 0)
    let slow = Store<SlowState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(SignalAfterCommit(slowEnded)), log.middleware(label: "slow")])
    let fast = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "fast")])
    return (slow, slowEnded, fast)
  }
}

/// A value set once one thread has made it, read on another.
private final class Slot<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var stored: Value?

  var value: Value? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

/// A state whose one action takes 100 ms to encode.
private final class SlowState: State {
  typealias Action = SlowAction
  typealias Mutations = SlowMutations
}

private enum SlowAction: Encodable, Sendable {
  case slowToEncode
  /// Signals when its encoding starts, so once its line has taken its turn.
  case signalThenEncodeSlowly(DispatchSemaphore)

  func encode(to encoder: any Encoder) throws {
    if case .signalThenEncodeSlowly(let encoding) = self { encoding.signal() }
    Thread.sleep(forTimeInterval: 0.1)
    var container = encoder.singleValueContainer()
    try container.encode("slow")
  }
}

private struct SlowMutations: Mutations {
  func commit(action: SlowAction, state: SlowState) {}
}

/// Signals after each commit, before the middleware after it in the list runs.
private struct SignalAfterCommit: Middleware {
  let semaphore: DispatchSemaphore

  init(_ semaphore: DispatchSemaphore) {
    self.semaphore = semaphore
  }

  func didCommit(action: SlowAction, state: SlowState) {
    semaphore.signal()
  }
}
