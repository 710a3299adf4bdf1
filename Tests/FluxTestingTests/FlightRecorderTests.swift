import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
  import Synchronization
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("ActionLog: the flight recorder")
struct FlightRecorderTests {
  @Test("a flight recorder keeps the last N actions, encodes nothing until asked, then writes them oldest first")
  func keepsTheLastActions() throws {
    let lines = Lines()
    let encodings = EncodingCount()
    let log = ActionLog(output: lines.output, fields: .sequence, flightRecorder: 3)
    #expect(log.isFlightRecorder)
    let store = Store<CountedState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
    for number in 1...5 { store.actions.dispatch(action: CountedAction(number: number, encodings: encodings)) }
    log.flush()
    #expect(encodings.value == 0)
    #expect(lines.all.isEmpty)
    log.writeFlightRecord()
    #expect(encodings.value == 3)
    #expect(lines.all.map { Self.number(in: $0) } == [3, 4, 5])
    #expect(lines.all.map { $0.contains(#""sequence":"#) } == [true, true, true])
    log.writeFlightRecord()  // the ring starts again, empty
    #expect(lines.all.count == 3)
    store.actions.dispatch(action: CountedAction(number: 6, encodings: encodings))
    try log.finish()  // writes what it holds
    #expect(lines.all.map { Self.number(in: $0) } == [3, 4, 5, 6])
  }

  @Test("a flight recorder let go writes what it holds")
  func letGoWritesWhatItHolds() {
    let lines = Lines()
    do {
      let log = ActionLog(output: lines.output, fields: [], flightRecorder: 10)
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
      for amount in 1...4 { store.actions.dispatch(action: .add(amount)) }
    }
    #expect(lines.all.count == 4)
  }

  @Test("writes racing commits on several threads: no action written twice, each store's in order, the last N kept")
  func writesRacingCommits() throws {
    for _ in 0..<5 {
      let lines = Lines()
      let log = ActionLog(output: lines.output, fields: [], flightRecorder: 100)
      let stores = (0..<4).map { index in
        Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
      }
      DispatchQueue.concurrentPerform(iterations: 5) { index in
        if index == 4 {
          for _ in 0..<50 { log.writeFlightRecord() }
        } else {
          for amount in 1...500 { stores[index].actions.dispatch(action: .add(amount)) }
        }
      }
      log.writeFlightRecord()
      let recording = try Recording(jsonLines: lines.text)
      var lasts: [Int] = []
      for index in 0..<4 {
        let amounts = try recording.entries.filter { $0.store == "s\(index)" }.map {
          guard case .add(let amount) = try $0.action(as: CounterAction.self) else { return 0 }
          return amount
        }
        #expect(amounts == amounts.sorted() && Set(amounts).count == amounts.count)
        lasts.append(amounts.last ?? 0)
      }
      // The last 100 actions were held at the end, or written before: the last one ended is there.
      #expect(recording.entries.count >= 100)
      #expect(lasts.contains(500))
      #expect(recording.entries.map(\.time) == recording.entries.map(\.time).sorted())
    }
  }

  #if os(Linux)
    @Test("a flight recorder writes what it holds when the process exits normally")
    func writesAtExit() async throws {
      let url = Self.childLog("exit")
      defer { try? FileManager.default.removeItem(at: url) }
      // Swift Testing runs the body in a child process, with SWIFT_BACKTRACE=enable=no on Linux.
      await #expect(processExitsWith: .success) {
        let log = try ActionLog(
          output: .file(FlightRecorderTests.childLog("exit", parent: true)), fields: [], flightRecorder: 10)
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...4 { store.actions.dispatch(action: .add(amount)) }
        withExtendedLifetime((log, store)) { exit(0) }
      }
      let amounts = try Recording(contentsOf: url).entries.map { try $0.action(as: CounterAction.self) }
      #expect(amounts == (1...4).map { .add($0) })
    }

    @Test("a trap keeps the lines written before it, and appends one line that counts the actions held")
    func trapAppendsACrashLine() async throws {
      let url = Self.childLog("trap")
      defer { try? FileManager.default.removeItem(at: url) }
      let trap = Self.trap
      let result = await #expect(processExitsWith: .signal(trap), observing: [\.standardErrorContent]) {
        let log = try ActionLog(
          output: .file(FlightRecorderTests.childLog("trap", parent: true)), fields: [], flightRecorder: 10)
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...3 { store.actions.dispatch(action: .add(amount)) }
        log.writeFlightRecord()
        for amount in 4...5 { store.actions.dispatch(action: .add(amount)) }
        withExtendedLifetime((log, store)) { fatalError("a bug") }
      }
      Self.expectNoSanitizerReport(result)
      let text = try String(contentsOf: url, encoding: .utf8)
      let lines = text.split(separator: "\n").map(String.init)
      #expect(lines.count == 4)
      let written = try Recording(jsonLines: lines.prefix(3).joined(separator: "\n") + "\n").entries
      #expect(try written.map { try $0.action(as: CounterAction.self) } == [.add(1), .add(2), .add(3)])
      let crash = try #require(
        JSONSerialization.jsonObject(with: Data((lines.last ?? "").utf8)) as? [String: Any])
      #expect(crash["flightRecorderLost"] as? Int == 2)
      #expect(crash["signal"] as? Int == Int(trap))
      #expect(
        crash["error"] as? String
          == "the process stopped on signal \(trap): the flight recorder held 2 actions, not written")
    }

    @Test(
      "a trap while other threads commit appends exactly one whole crash line, whose count is one number",
      .serialized, arguments: 0..<12)
    func trapWhileCommittingWritesOneWholeLine(round: Int) async throws {
      let url = Self.childLog("commits")
      defer { try? FileManager.default.removeItem(at: url) }
      let result = await #expect(processExitsWith: .signal(Self.trap), observing: [\.standardErrorContent]) {
        // Large enough never to fill: the count changes with every commit while the handler runs.
        let log = try ActionLog(
          output: .file(FlightRecorderTests.childLog("commits", parent: true)), fields: [],
          flightRecorder: 10_000_000)
        let committed = Counter()
        for index in 0..<3 {
          let store = Store<CounterState>(
            state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "s\(index)")])
          Thread.detachNewThread {
            while true {
              store.actions.dispatch(action: .add(1))
              committed.add()
            }
          }
        }
        while committed.value < 2_000 { sched_yield() }
        withExtendedLifetime(log) { fatalError("a bug while other threads commit") }
      }
      Self.expectNoSanitizerReport(result)
      try Self.expectOneCrashLine(in: url, atLeast: 2_000)
    }

    @Test("two threads that trap at once append exactly one whole crash line", .serialized, arguments: 0..<40)
    func twoTrapsAtOnceWriteOneLine(round: Int) async throws {
      let url = Self.childLog("twice")
      defer { try? FileManager.default.removeItem(at: url) }
      let result = await #expect(processExitsWith: .signal(Self.trap), observing: [\.standardErrorContent]) {
        let log = try ActionLog(
          output: .file(FlightRecorderTests.childLog("twice", parent: true)), fields: [], flightRecorder: 10)
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...3 { store.actions.dispatch(action: .add(amount)) }
        let ready = Counter()
        for _ in 0..<2 {
          Thread.detachNewThread {
            ready.add()
            while ready.value < 2 {}
            withExtendedLifetime(log) { FlightRecorderTests.trapNow() }
          }
        }
        while true { sleep(1) }
      }
      Self.expectNoSanitizerReport(result)
      try Self.expectOneCrashLine(in: url, exactly: 3)
    }
  #endif

  #if arch(x86_64)
    static let trap = SIGILL
  #else
    static let trap = SIGTRAP
  #endif

  /// A trap with nothing printed first: the two threads reach the handler as close together as
  /// they can.
  static func trapNow() -> Never {
    var big = Int.max - Int.random(in: 0...0)
    withUnsafeMutablePointer(to: &big) { $0.pointee += 1 }
    fatalError("unreachable: \(big)")
  }

  /// Under the thread sanitizer, the child's handler raced nothing: the sanitizer said nothing
  /// (a child reports a race on its standard error, and dies by the signal all the same).
  static func expectNoSanitizerReport(_ result: ExitTest.Result?) {
    let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(!errors.contains("ThreadSanitizer"), "\(errors)")
  }

  /// The file at `url` holds one line, whole, written by the handler: its count said twice, the
  /// same, and in range.
  static func expectOneCrashLine(in url: URL, atLeast least: Int = 0, exactly count: Int? = nil) throws {
    let text = try String(contentsOf: url, encoding: .utf8)
    #expect(text.hasSuffix("\n"))
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == 1, "\(text)")
    let crash = try #require(JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
    let lost = try #require(crash["flightRecorderLost"] as? Int)
    #expect(lost >= least)
    if let count { #expect(lost == count) }
    #expect(crash["signal"] as? Int == Int(trap))
    #expect(
      crash["error"] as? String
        == "the process stopped on signal \(trap): the flight recorder held \(lost) actions, not written")
  }

  /// The log of a child process's test: named after the process that runs the test (the
  /// parent of the child).
  static func childLog(_ name: String, parent: Bool = false) -> URL {
    let pid = parent ? getppid() : getpid()
    return FileManager.default.temporaryDirectory.appendingPathComponent("flight-\(name)-\(pid).jsonl")
  }

  /// The `number` of a line's action.
  private static func number(in line: String) -> Int? {
    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    return (object?["action"] as? [String: Any])?["number"] as? Int
  }
}

#if os(Linux)
  /// A count that threads add to and read, without a lock.
  private final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    func add() { count.add(1, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
  }
#endif

/// A state whose actions count their encodings.
private final class CountedState: State {
  typealias Action = CountedAction
  typealias Mutations = CountedMutations
}

private struct CountedAction: Encodable, Sendable {
  let number: Int
  let encodings: EncodingCount

  private enum CodingKeys: String, CodingKey {
    case number
  }

  func encode(to encoder: any Encoder) throws {
    encodings.add()
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(number, forKey: .number)
  }
}

private struct CountedMutations: Mutations {
  func commit(action: CountedAction, state: CountedState) {}
}

/// How many times actions were encoded, from any thread.
private final class EncodingCount: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var count = 0

  func add() { lock.withLock { count += 1 } }

  var value: Int { lock.withLock { count } }
}
