import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import FluxDevtools

/// A drainer that runs out of lines lingers: a line offered soon after only joins the queue, and
/// a check after a nap writes it (``LineQueue``).
@Suite("ActionLog: a drainer that lingers")
struct ActionLogLingerTests {
  // MARK: The state machine

  @Test("a line offered while the drainer lingers wakes no thread; the next check drains it")
  func lineOfferedWhileLingeringWakesNoThread() {
    var queue = LineQueue(limit: 100)
    #expect(queue.offer(StubLine(), at: Date()) == true, "the first line to an idle queue starts a drainer")
    let taken = queue.take(at: Date())
    #expect(taken.batch.count == 1 && taken.nap == nil)
    _ = queue.wrote(1)
    let nap = try! #require(queue.take(at: Date()).nap)
    #expect(nap.nanoseconds == LineQueue.Linger.firstNap)
    #expect(queue.offer(StubLine(), at: Date()) == false, "an offer to a lingering queue started a drainer")
    #expect(queue.check(nap, at: Date()) == .drain)
    #expect(queue.drainer == .draining)
    #expect(queue.take(at: Date()).batch.count == 1)
  }

  @Test(
    "the naps of a linger double; one that catches nothing halves the next, and a line soon after idle gives all back")
  func lingersAdaptToHowLinesCome() {
    var queue = LineQueue(limit: 10)
    /// The naps of a linger that catches nothing.
    func emptyLinger() -> [UInt64] {
      guard var nap = queue.take(at: Date()).nap else { return [] }
      var naps = [nap.nanoseconds]
      while case .nap(let next) = queue.check(nap, at: Date()) {
        #expect(next.generation == nap.generation)
        nap = next
        naps.append(next.nanoseconds)
      }
      #expect(queue.drainer == .idle)
      return naps
    }
    let whole = emptyLinger()
    #expect(whole == [500_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000, 16_000_000])
    #expect(Double(whole.reduce(0, +)) / 1e9 == LineQueue.Linger.reach)
    #expect(emptyLinger().count == 3)
    #expect(emptyLinger().count == 1)
    #expect(emptyLinger().isEmpty, "a queue whose lingers caught nothing still lingers")
    #expect(queue.drainer == .idle)
    // A line a second after the queue went idle: a linger would not have caught it.
    #expect(queue.offer(StubLine(), at: Date().addingTimeInterval(1)) == true)
    _ = queue.take(at: Date())
    _ = queue.wrote(1)
    #expect(emptyLinger().isEmpty)
    // A line right after: a whole linger would have.
    #expect(queue.offer(StubLine(), at: Date()) == true)
    #expect(queue.lingerChecks == LineQueue.Linger.mostChecks)
    _ = queue.take(at: Date())
    _ = queue.wrote(1)
    #expect(emptyLinger().count == LineQueue.Linger.mostChecks)
  }

  @Test("a flight recorder's queue never lingers: its lines come with the flush that writes them")
  func flightRecorderQueueNeverLingers() {
    var queue = LineQueue(limit: 10, lingers: false)
    #expect(queue.take(at: Date()).nap == nil)
    #expect(queue.drainer == .idle)
    #expect(queue.offer(StubLine(), at: Date()) == true)
    #expect(queue.lingerChecks == 0)
  }

  @Test("a check of an ended linger does nothing, in the linger after it too")
  func checkOfAnEndedLingerDoesNothing() {
    var queue = LineQueue(limit: 10)
    let first = try! #require(queue.take(at: Date()).nap)
    #expect(queue.endLinger() == false)
    #expect(queue.drainer == .idle)
    #expect(queue.check(first, at: Date()) == .nothing)
    #expect(queue.offer(StubLine(), at: Date()) == true)
    _ = queue.take(at: Date())
    _ = queue.wrote(1)
    let second = try! #require(queue.take(at: Date()).nap)
    #expect(second.generation != first.generation)
    #expect(queue.offer(StubLine(), at: Date()) == false)
    #expect(queue.check(first, at: Date()) == .nothing, "a check of the first linger drained the second's line")
    #expect(
      queue.drainer
        == .lingering(generation: second.generation, nap: second.nanoseconds, left: LineQueue.Linger.mostChecks - 1))
    #expect(queue.check(second, at: Date()) == .drain)
  }

  @Test("lines that pile up during a nap start the drainer at a quarter of the limit, before the queue is full")
  func pileDuringANapStartsTheDrainer() {
    for (limit, wake) in [(1, 1), (2, 1), (3, 1), (4, 1), (8, 2), (100, 25), (100_000, 256)] {
      var queue = LineQueue(limit: limit)
      _ = queue.take(at: Date())
      #expect(queue.wakeCount == wake)
      for index in 1..<wake {
        #expect(queue.offer(StubLine(), at: Date()) == false, "line \(index) of \(limit)")
      }
      #expect(queue.offer(StubLine(), at: Date()) == true, "the line that fills half a queue of \(limit)")
      #expect(queue.drainer == .draining)
    }
  }

  @Test("flush() and the end of a linger start the drainer for lines queued during a nap, and only then")
  func flushDuringANapStartsTheDrainer() {
    var queue = LineQueue(limit: 100)
    _ = queue.take(at: Date())
    #expect(queue.waiter().semaphore == nil, "nothing to wait for")
    #expect(queue.drainer != .draining)
    _ = queue.offer(StubLine(), at: Date())
    let waiter = queue.waiter()
    #expect(waiter.semaphore != nil && waiter.startsDrainer)
    #expect(queue.waiter().startsDrainer == false, "a second waiter started a second drainer")
    var other = LineQueue(limit: 100)
    _ = other.take(at: Date())
    _ = other.offer(StubLine(), at: Date())
    #expect(other.endLinger() == true)
    #expect(other.endLinger() == false)
  }

  // MARK: A log

  @Test("a line offered while the log lingers, and one after the linger is over, are written without flush()")
  func linesAreWrittenWithoutFlush() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    store.actions.dispatch(action: .add(1))
    try #require(Self.wait { lines.all.count == 1 })
    store.actions.dispatch(action: .add(2))  // the drainer lingers now
    try #require(Self.wait { lines.all.count == 2 }, "a line offered while the log lingered was not written")
    Thread.sleep(forTimeInterval: LineQueue.Linger.reach + 0.2)
    store.actions.dispatch(action: .add(3))  // the queue is idle again
    try #require(Self.wait { lines.all.count == 3 }, "a line offered after the linger was not written")
    #expect(lines.all.compactMap(Self.amount) == [1, 2, 3])
  }

  @Test("lines from several threads, paused about the naps' lengths, are all written in order without flush()")
  func pausedLinesFromSeveralThreadsAreWrittenInOrder() throws {
    for round in 0..<3 {
      let lines = Lines()
      let log = ActionLog(output: lines.output)
      let threads = 4
      let actions = 120
      DispatchQueue.concurrentPerform(iterations: threads) { thread in
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate,
          middlewares: [log.middleware(label: "t\(thread)")])
        var generator = SystemRandomNumberGenerator()
        for amount in 1...actions {
          store.actions.dispatch(action: .add(amount))
          // From nothing to past the longest nap: offers land in every phase of a linger.
          let pause = [0, 0, 50, 150, 400, 1_500, 6_000, 12_000, 25_000].randomElement(using: &generator)!
          if pause > 0 { usleep(UInt32(pause)) }
          if amount % 50 == 0 && thread == round { log.flush() }
        }
      }
      try #require(
        Self.wait(seconds: 30) { lines.all.count == threads * actions },
        "round \(round): \(lines.all.count) of \(threads * actions) lines written")
      for thread in 0..<threads {
        let amounts = lines.all.filter { $0.contains(#""store":"t\#(thread)""#) }.compactMap(Self.amount)
        #expect(amounts == Array(1...actions), "round \(round), thread \(thread)")
      }
    }
  }

  @Test("a log let go while its drainer lingers lets go of its output at once, and its checks touch nothing")
  func logLetGoWhileLingeringLetsGoOfItsOutput() {
    for _ in 0..<20 {
      weak var weakToken: Token?
      do {
        let token = Token()
        weakToken = token
        let log = ActionLog(output: ActionLogOutput { _ in withExtendedLifetime(token) {} })
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        store.actions.dispatch(action: .add(1))
        log.flush()  // the drainer lingers now
        store.actions.dispatch(action: .add(2))  // and this line waits for a check, or the log's deinit
      }
      #expect(weakToken == nil, "the output outlived its log")
    }
    Thread.sleep(forTimeInterval: 0.05)  // checks still to come find their linger over
  }

  /// Waits up to `seconds` for `condition`; whether it held.
  static func wait(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() {
      if Date() > end { return false }
      usleep(200)
    }
    return true
  }

  /// The amount of an `add` line.
  static func amount(_ line: String) -> Int? {
    guard let range = line.range(of: #""add":{"_0":"#) else { return nil }
    return Int(line[range.upperBound...].prefix { $0.isNumber })
  }
}

/// A line that encodes to nothing.
private struct StubLine: PendingLine {
  var label: String { "stub" }
  func encoded(date: Date, sequence: UInt64?, with encoder: JSONEncoder) -> String { "" }
}

private final class Token: Sendable {}
