import FluxReactive
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// Random programs of observe, dispose and send steps (also made by observers from inside a
// delivery) run on a real Sink or Variable and on `SubjectModel`, the contract written as a
// plain single-threaded program; both must produce the same events. A failure prints the seed
// and the program; set FLUX_MODEL_SEED=<seed> to run that one program alone.

@Suite("Model: sinks and variables against a reference model")
struct ModelTests {
  /// The programs each single-threaded test runs.
  private static let programCount = 2_000

  private static var seeds: [UInt64] {
    if let text = getenv("FLUX_MODEL_SEED").map({ String(cString: $0) }), let seed = UInt64(text) { return [seed] }
    return (0..<UInt64(programCount)).map { 0x5EED_0000 + $0 }
  }

  /// Runs every seed's program on `makeSubject(program)` and on the model; records the first mismatch.
  private static func check(
    _ subject: ModelProgram.Subject,
    reactions: ModelProgram.Reactions,
    makeSubject: (ModelProgram) -> any ModelSubject
  ) {
    for seed in seeds {
      let program = ModelProgram(seed: seed, subject: subject, reactions: reactions)
      let expected = SubjectModel.events(of: program)
      let harness = ModelHarness(program: program, subject: makeSubject(program))
      harness.run()
      #expect(harness.callsOnOtherThreads == 0, "observers ran on another thread; \(program)")
      if harness.events != expected {
        Issue.record("\(program)\n\(mismatch(harness.events, expected))")
        return
      }
    }
  }

  private static func mismatch(_ actual: [ModelEvent], _ expected: [ModelEvent]) -> String {
    let index = zip(actual, expected).enumerated().first { $1.0 != $1.1 }?.offset ?? min(actual.count, expected.count)
    return """
      first difference at event \(index)
      actual:   \(actual)
      expected: \(expected)
      """
  }

  @Test("inv1_sinkCallsObserversSynchronouslyInTheOrderTheyWereAdded")
  func inv1_sinkCallsObserversSynchronouslyInTheOrderTheyWereAdded() {
    Self.check(.sink, reactions: []) { _ in ModelSink() }
  }

  @Test("inv2_sendFromInsideAnObserverIsQueuedAndDeliveredBeforeTheOuterSendReturns")
  func inv2_sendFromInsideAnObserverIsQueuedAndDeliveredBeforeTheOuterSendReturns() {
    Self.check(.sink, reactions: [.send]) { _ in ModelSink() }
  }

  @Test("inv4_observersAddedOrDisposedDuringADeliveryFollowTheRules")
  func inv4_observersAddedOrDisposedDuringADeliveryFollowTheRules() {
    Self.check(.sink, reactions: [.send, .observe, .dispose]) { _ in ModelSink() }
  }

  @Test("inv5_variableReplaysTheCurrentValueThenEveryChange")
  func inv5_variableReplaysTheCurrentValueThenEveryChange() {
    Self.check(.variable, reactions: [.send, .observe, .dispose, .read]) { ModelVariable($0.initial) }
  }

  @Test("the model tells a nested, unqueued delivery from the contract")
  func modelRejectsNestedDelivery() {
    let seeds = (0..<UInt64(200)).map { 0x5EED_0000 + $0 }
    let rejected = seeds.contains { seed in
      let program = ModelProgram(seed: seed, subject: .sink, reactions: [.send, .observe, .dispose])
      let harness = ModelHarness(program: program, subject: NestedDeliverySink())
      harness.run()
      return harness.events != SubjectModel.events(of: program)
    }
    #expect(rejected)
  }
}

// Several threads send distinct values into one sink or variable while others add and dispose
// observers; `ThreadedDeliveryLog` checks what every observer saw.
extension ModelTests {
  private static let rounds = 20
  private static let senders = 4
  private static let perSender = 200
  private static let steadyObservers = 3
  private static let churners = 2
  private static let minimumChurnCycles = 20

  /// Runs one round: senders call `send`, churners observe and dispose through `observe` until
  /// every sender is done. Threads yield now and then so that they interleave on few cores.
  private static func runRound(
    log: ThreadedDeliveryLog,
    send: @escaping @Sendable (Int, Int) -> Void,
    observe: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> any Disposable
  ) {
    let steady = (0..<steadyObservers).map { observe(log.observer($0)) }
    runOnThreads(senders + churners) { thread in
      if thread < senders {
        log.registerSender(thread)
        for index in 0..<perSender {
          let value = thread * perSender + index
          send(thread, value)
          log.checkDelivered(value)
          if index % (thread + 2) == 0 { yieldThread() }
        }
        log.markSenderFinished()
      } else {
        var cycle = 0
        while cycle < minimumChurnCycles || !log.allSendersFinished {
          let id = steadyObservers + (thread - senders) * 1_000_000 + cycle
          let disposable = observe(log.observer(id))
          for _ in 0..<(cycle % 4) { yieldThread() }
          disposable.dispose()
          log.markDisposed(id)
          cycle += 1
        }
      }
    }
    for disposable in steady { disposable.dispose() }
  }

  @Test("inv3_sendsFromSeveralThreadsReachEveryObserverInOneOrderWithoutOverlap")
  func inv3_sendsFromSeveralThreadsReachEveryObserverInOneOrderWithoutOverlap() {
    for round in 0..<Self.rounds {
      let sink = Sink<Int>()
      let log = ThreadedDeliveryLog(
        senders: Self.senders, perSender: Self.perSender, steadyObservers: Self.steadyObservers)
      Self.runRound(log: log, send: { _, value in sink.send(value: value) }, observe: { sink.signal.observe($0) })
      let problems = log.findProblems().prefix(5)
      #expect(problems.isEmpty, "round \(round): \(Array(problems))")
      if !problems.isEmpty { return }
    }
  }

  @Test("inv5_variableReplaysTheValueBeforeTheChangesAnObserverSeesUnderConcurrentSets")
  func inv5_variableReplaysTheValueBeforeTheChangesAnObserverSeesUnderConcurrentSets() {
    for round in 0..<Self.rounds {
      let variable = Variable(-1)
      let log = ThreadedDeliveryLog(
        senders: Self.senders, perSender: Self.perSender, steadyObservers: Self.steadyObservers)
      Self.runRound(
        log: log,
        send: { thread, value in
          if thread.isMultiple(of: 2) { variable.value = value } else { variable.modify { $0 = value } }
        },
        observe: { variable.signal.observe($0) })
      let problems = log.findProblems(initial: -1).prefix(5)
      #expect(problems.isEmpty, "round \(round): \(Array(problems))")
      if !problems.isEmpty { return }
    }
  }
}

/// A naive sink that delivers a value sent from inside an observer at once, nested, to the
/// observers present at that moment: what invariants 2 and 4 rule out.
private final class NestedDeliverySink: ModelSubject {
  private final class Token: Disposable, @unchecked Sendable {
    // Only touched on the thread that runs the program.
    var isDisposed = false
    func dispose() { isDisposed = true }
  }

  private var observers: [(token: Token, call: (Int) -> Void)] = []

  func observe(id: Int, _ observer: @escaping @Sendable (Int) -> Void) -> any Disposable {
    let token = Token()
    observers.append((token, observer))
    return token
  }

  func send(_ value: Int) {
    for observer in observers where !observer.token.isDisposed { observer.call(value) }
  }

  func modify(_ value: Int) { send(value) }
  func read() -> Int { preconditionFailure("a sink has no value") }
}
