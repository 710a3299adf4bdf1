import Dispatch
import FluxCore
import FluxDevtools
import FluxTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A drainer that lingers, at its edges: small limits, logs let go on a writer's queue while
/// lines wait for a check, flushes racing checks, a child forked while the parent's log lingers.
@Suite("ActionLog: a drainer that lingers, at its edges")
struct ActionLogLingerEdgeTests {
  @Test(
    "small limits, slow outputs, threads paused about the naps: every line is written or counted as dropped, numbered without a gap, without flush()",
    arguments: [1, 2, 3, 4, 7, 64])
  func smallLimitsAccountForEveryLine(limit: Int) throws {
    for round in 0..<4 {
      let lines = Lines()
      let slowness = [0, 100, 1_000][round % 3]
      let log = ActionLog(
        output: ActionLogOutput { line in
          if slowness > 0 { usleep(UInt32(slowness)) }
          lines.output.write(line)
        }, fields: .sequence, queueLimit: limit)
      let threads = 3
      let actions = 150
      DispatchQueue.concurrentPerform(iterations: threads) { thread in
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate,
          middlewares: [log.middleware(label: "t\(thread)")])
        var generator = SystemRandomNumberGenerator()
        for amount in 1...actions {
          store.actions.dispatch(action: .add(amount))
          // Bursts that start in every phase of a linger: right after a check, mid-nap, after the
          // longest nap.
          let pause = [0, 0, 0, 100, 150, 1_000, 1_100, 20_000, 21_000].randomElement(using: &generator)!
          if pause > 0 && amount % 7 == 0 { usleep(UInt32(pause)) }
        }
      }
      // No flush(): every line comes by itself, written or counted.
      let accounted = {
        lines.all.map(Self.fields).reduce(0) { $0 + ($1.dropped ?? 1) }
      }
      try #require(
        ActionLogLingerTests.wait(seconds: 30) { accounted() == threads * actions },
        "limit \(limit), round \(round): \(accounted()) of \(threads * actions) lines written or counted")
      let all = lines.all.map(Self.fields)
      #expect(all.map(\.sequence) == Array(1...all.count), "limit \(limit), round \(round)")
      for thread in 0..<threads {
        let amounts = all.filter { $0.store == "t\(thread)" }.compactMap(\.amount)
        #expect(amounts == amounts.sorted(), "limit \(limit), round \(round), thread \(thread)")
      }
    }
  }

  @Test("a log let go in its own output, while lines wait for a check, writes them all, then lets go of its output")
  func logLetGoInItsOwnOutputWritesTheLinesQueued() throws {
    for round in 0..<24 {
      weak var weakToken: Token?
      let lines = Lines()
      let held = Held<Store<CounterState>>()
      let release = DispatchSemaphore(value: 0)
      let lingers = round % 2 == 1
      do {
        let token = Token()
        weakToken = token
        let log = ActionLog(
          output: ActionLogOutput { line in
            withExtendedLifetime(token) {}
            lines.output.write(line)
            if line.contains(#""_0":1}"#) {
              release.wait()
              held.take()  // the last reference to the store, and so to the log
            }
          })
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        held.put(store)
        if lingers {
          store.actions.dispatch(action: .add(0))
          log.flush()  // the drainer lingers now: the next lines wait for a check
          usleep(UInt32([0, 100, 1_000, 20_000][round / 2 % 4]))
        }
        for amount in 1...20 { store.actions.dispatch(action: .add(amount)) }
      }
      release.signal()
      let expected = lingers ? 21 : 20
      try #require(lines.waitForCount(expected), "round \(round): \(lines.all.count) of \(expected) lines")
      #expect(ActionLogLingerTests.wait { weakToken == nil }, "round \(round): the output outlived its log")
      #expect(lines.all.compactMap(ActionLogLingerTests.amount) == Array((lingers ? 0 : 1)...20))
    }
    Thread.sleep(forTimeInterval: 0.05)  // checks still to come find their writer gone
  }

  @Test("a log let go on another log's queue, while its line waits for a check, writes it, then lets go of its output")
  func logLetGoOnAnotherLogsQueueWhileLingering() throws {
    for round in 0..<16 {
      weak var weakToken: Token?
      let lines = Lines()
      let held = Held<ActionLog>()
      do {
        let token = Token()
        weakToken = token
        let log = ActionLog(
          output: ActionLogOutput { line in
            withExtendedLifetime(token) {}
            lines.output.write(line)
          })
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        store.actions.dispatch(action: .add(1))
        log.flush()  // the drainer lingers now
        usleep(UInt32([0, 100, 1_000, 20_000][round % 4]))
        store.actions.dispatch(action: .add(2))  // waits for a check, or the log's deinit
        held.put(log)
      }
      // The other log's output lets go of the last reference: the deinit runs on its queue.
      let other = ActionLog(output: ActionLogOutput { _ in held.take() })
      let otherStore = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [other.middleware(label: "o")])
      otherStore.actions.dispatch(action: .add(1))
      other.flush()
      #expect(held.isEmpty)
      #expect(weakToken == nil, "round \(round): the output outlived its log")
      #expect(lines.all.compactMap(ActionLogLingerTests.amount) == [1, 2], "round \(round)")
    }
    Thread.sleep(forTimeInterval: 0.05)
  }

  @Test("flush() on several threads, racing offers and checks, returns once the lines before it are written")
  func flushRacingChecksWaitsForItsLines() {
    for round in 0..<8 {
      let lines = Lines()
      let log = ActionLog(output: lines.output)
      let early = LockedFlag()
      DispatchQueue.concurrentPerform(iterations: 4) { thread in
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate,
          middlewares: [log.middleware(label: "t\(thread)")])
        var generator = SystemRandomNumberGenerator()
        for amount in 1...60 {
          store.actions.dispatch(action: .add(amount))
          if Bool.random(using: &generator) {
            log.flush()
            let mine = lines.all.filter { $0.contains(#""store":"t\#(thread)""#) }.count
            if mine < amount { early.set() }
          }
          let pause = [0, 100, 1_000, 2_000, 20_000].randomElement(using: &generator)!
          if pause > 0 && amount % 5 == 0 { usleep(UInt32(pause)) }
        }
      }
      #expect(!early.value, "round \(round): flush() returned before its lines were written")
    }
  }

  #if os(Linux)
    @Test(
      "a child forked while its parent's log lingers, with a line waiting, ends by itself; the parent writes its own lines only"
    )
    func childForkedWhileLingeringEndsByItself() async throws {
      await #expect(processExitsWith: .success) {
        let lines = Lines()
        let log = ActionLog(output: lines.output)
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        store.actions.dispatch(action: .add(1))
        log.flush()  // the drainer lingers now
        store.actions.dispatch(action: .add(2))  // waits for a check
        let child = fork()
        if child == 0 {
          // Past the count that starts a drainer, which the child has not.
          for amount in 1...600 { store.actions.dispatch(action: .add(amount)) }
          log.flush()
          exit(0)
        }
        waitForChildToEndByItself(child)
        log.flush()
        guard lines.all.compactMap(ActionLogLingerTests.amount) == [1, 2] else { _exit(4) }
        withExtendedLifetime((log, store)) { exit(0) }
      }
    }
  #endif

  /// The `sequence`, `dropped`, store and amount of a line.
  static func fields(_ line: String) -> (sequence: Int, dropped: Int?, store: String?, amount: Int?) {
    let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    let amount = ((object["action"] as? [String: Any])?["add"] as? [String: Any])?["_0"] as? Int
    return (object["sequence"] as? Int ?? -1, object["dropped"] as? Int, object["store"] as? String, amount)
  }
}

private final class Token: Sendable {}

/// A flag that threads set.
private final class LockedFlag: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var isSet = false

  func set() { lock.withLock { isSet = true } }

  var value: Bool { lock.withLock { isSet } }
}
