import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import FluxDevtools

/// How the lingers of an action log's queue adapt to how lines come, on a virtual clock: a
/// ``LineQueue`` driven as its writer drives it, its drainer and checks run when they are due.
@Suite("ActionLog: lingers adapt to how lines come")
struct ActionLogLingerAdaptTests {
  @Test(
    "a steady stream of lines spaced past a whole linger loses its lingers: no check per line once they have halved away",
    arguments: [40.0, 50.0, 60.0, 100.0, 1_000.0])
  func linesSpacedPastAWholeLingerLoseTheirLingers(spacing: Double) {
    let writer = VirtualWriter(limit: 1_000)
    let figures = writer.stream(spacing: spacing / 1_000, lines: 40)
    #expect(
      figures.checksPerLine == 0,
      "lines \(spacing) ms apart: \(figures.checksPerLine) checks per line in the steady state")
    #expect(figures.wakesPerLine == 1, "lines \(spacing) ms apart: \(figures.wakesPerLine) wakes per line")
    #expect(writer.queue.lingerChecks == 0)
    #expect(writer.written == Array(0..<40))
  }

  @Test(
    "a steady stream of lines spaced within a whole linger keeps its lingers: no wake per line after the first",
    arguments: [0.2, 1.0, 10.0, 20.0, 30.0])
  func linesSpacedWithinAWholeLingerKeepTheirLingers(spacing: Double) {
    let writer = VirtualWriter(limit: 1_000)
    let figures = writer.stream(spacing: spacing / 1_000, lines: 40)
    #expect(figures.wakesPerLine == 0, "lines \(spacing) ms apart: \(figures.wakesPerLine) wakes per line")
    #expect(figures.allowance == LineQueue.Linger.mostChecks)
    #expect(writer.written == Array(0..<40))
  }

  @Test("lines that come again within a whole linger of a run-out give the lingers back, from any allowance")
  func linesSoonAfterTheRunOutGiveTheLingersBack() {
    for allowance in [0, 1, 3] {
      let writer = VirtualWriter(limit: 1_000)
      // Lines a second apart halve the allowance down to `allowance`.
      var index = 0
      while writer.queue.lingerChecks > allowance {
        writer.offer(index)
        index += 1
        writer.run(until: writer.now + 1)
      }
      #expect(writer.queue.lingerChecks == allowance)
      // A line 20 ms after the last one ran out: a whole linger would have caught it.
      writer.offer(index)
      writer.run(until: writer.now + 0.020)
      writer.offer(index + 1)
      #expect(writer.queue.lingerChecks == LineQueue.Linger.mostChecks, "from \(allowance) checks")
      writer.run(until: writer.now + 1)
      #expect(writer.written == Array(0...index + 1))
    }
  }

  @Test(
    "offers, flushes and settles in any order, at any allowance and limit, with dates back and forth: no line is stuck, lost or reordered",
    arguments: [1, 2, 3, 8, 1_000])
  func noLineIsStuckLostOrReordered(limit: Int) {
    var generator = SystemRandomNumberGenerator()
    for round in 0..<200 {
      let writer = VirtualWriter(limit: limit)
      var offered = 0
      for _ in 0..<200 {
        switch Int.random(in: 0..<20, using: &generator) {
        case 0:
          writer.flush()
        case 1:
          writer.settle()
        case 2:
          // A clock set back, or forward, by up to an hour.
          writer.skew += Double.random(in: -3_600...3_600, using: &generator)
        default:
          writer.offer(offered)
          offered += 1
        }
        let pause = [0, 0, 0.000_1, 0.000_5, 0.001, 0.003, 0.008, 0.016, 0.031, 0.040, 0.1, 1]
          .randomElement(using: &generator)!
        writer.run(until: writer.now + pause)
      }
      // No flush(): what is queued is written by the drainer or the checks alone.
      writer.run(until: writer.now + 3_600)
      #expect(writer.events.isEmpty, "round \(round): events still to come")
      #expect(writer.queue.drainer == .idle, "limit \(limit), round \(round): \(writer.queue.drainer)")
      #expect(
        writer.written.count + writer.dropped == offered,
        "limit \(limit), round \(round): \(writer.written.count) written, \(writer.dropped) dropped of \(offered)")
      #expect(writer.written == writer.written.sorted(), "limit \(limit), round \(round)")
    }
  }

  @Test(
    "a log whose actions come 40 ms apart, then 1 ms apart, then 40 ms apart again writes every line in order without flush()"
  )
  func pacedActionsAreWrittenInOrderAsTheLingersAdapt() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    let paces: [UInt32] =
      Array(repeating: 40_000, count: 8) + Array(repeating: 1_000, count: 20)
      + Array(repeating: 40_000, count: 8)
    for (index, pace) in paces.enumerated() {
      store.actions.dispatch(action: .add(index + 1))
      usleep(pace)
    }
    try #require(
      ActionLogLingerTests.wait { lines.all.count == paces.count },
      "\(lines.all.count) of \(paces.count) lines written")
    #expect(lines.all.compactMap(ActionLogLingerTests.amount) == Array(1...paces.count))
  }
}

/// A line that knows its place.
private struct IndexedLine: PendingLine {
  let index: Int
  var label: String { "indexed" }
  func encoded(date: Date, sequence: UInt64?, with encoder: JSONEncoder) -> String { "\(index)" }
}

/// A ``LineQueue`` driven as ``LineWriter`` drives it, on a virtual clock (seconds): the drainer
/// and the checks run, in the order they were scheduled, when they are due.
private final class VirtualWriter {
  enum Event {
    case drain
    case check(LineQueue.Nap)
  }

  var queue: LineQueue
  /// The virtual time.
  private(set) var now = 0.0
  /// What the wall clock says beyond the virtual time: a clock set back or forward.
  var skew = 0.0
  /// What is due, and when; `order` breaks ties.
  private(set) var events: [(at: Double, order: Int, event: Event)] = []
  private var order = 0
  /// The indices of the lines written, in order.
  private(set) var written: [Int] = []
  /// Lines counted as dropped.
  private(set) var dropped = 0
  /// Checks run, and threads woken (drainers started by an offer, flush or settle).
  private(set) var checks = 0
  private(set) var wakes = 0
  private let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)

  init(limit: Int) {
    queue = LineQueue(limit: limit)
  }

  /// The wall clock now.
  var date: Date { origin.addingTimeInterval(now + skew) }

  func offer(_ index: Int) {
    if queue.offer(IndexedLine(index: index), at: date) { start() }
  }

  /// A flush() that does not wait: the waiter's drainer is scheduled.
  func flush() {
    if queue.waiter().startsDrainer { start() }
  }

  func settle() {
    if queue.endLinger() { start() }
  }

  private func start() {
    wakes += 1
    schedule(.drain, after: 0)
  }

  private func schedule(_ event: Event, after seconds: Double) {
    events.append((now + seconds, order, event))
    order += 1
  }

  /// Runs what is due until `end`.
  func run(until end: Double) {
    while let next = events.min(by: { ($0.at, $0.order) < ($1.at, $1.order) }), next.at <= end {
      events.removeAll { $0.order == next.order }
      now = max(now, next.at)
      switch next.event {
      case .drain:
        drain()
      case .check(let nap):
        checks += 1
        switch queue.check(nap, at: date) {
        case .nothing: break
        case .nap(let next): schedule(.check(next), after: Double(next.nanoseconds) / 1e9)
        case .drain: drain()
        }
      }
    }
    now = max(now, end)
  }

  /// The drainer: 50 µs a batch.
  private func drain() {
    var (batch, nap) = queue.take(at: date)
    while !batch.isEmpty {
      for entry in batch {
        switch entry {
        case .line(let line, _): written.append((line as! IndexedLine).index)
        case .dropped(let run): dropped += Int(run.count)
        }
      }
      now += 0.000_05
      _ = queue.wrote(batch.count)
      (batch, nap) = queue.take(at: date)
    }
    if let nap { schedule(.check(nap), after: Double(nap.nanoseconds) / 1e9) }
  }

  /// Offers `lines` lines `spacing` seconds apart, and then a second more, so that the last is
  /// written; checks and wakes per line over the second half of the lines, and the allowance of
  /// checks when the last was offered.
  func stream(spacing: Double, lines: Int) -> (checksPerLine: Double, wakesPerLine: Double, allowance: Int) {
    var checksThen = 0
    var wakesThen = 0
    for index in 0..<lines {
      if index == lines / 2 {
        checksThen = checks
        wakesThen = wakes
      }
      offer(index)
      run(until: now + spacing)
    }
    let half = Double(lines - lines / 2)
    let figures = (Double(checks - checksThen) / half, Double(wakes - wakesThen) / half, queue.lingerChecks)
    run(until: now + 1)
    return figures
  }
}
