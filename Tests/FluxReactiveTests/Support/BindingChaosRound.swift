import Dispatch
import FluxCore
import Foundation

@testable import FluxReactive

/// A main-actor object that bindings update.
@MainActor final class ChaosTarget {
  var value = 0
  var optionalValue: Int?
  let flag = DeallocFlag()

  deinit { flag.markFreed() }
}

/// One binding of a round of `BindingChaosRound` and what it applied.
final class ChaosBinding: Sendable {
  struct State {
    var log: [Int] = []
    var isDisposed = false
    var disposable: (any Disposable)?
  }

  let id: Int
  let target: DeallocFlag
  let captured = DeallocFlag()
  let state = LockedValue(State())

  init(id: Int, target: DeallocFlag) {
    self.id = id
    self.target = target
  }
}

/// One round of bindings on the main actor fed by threads that send, and that dispose bindings,
/// while the main actor binds, disposes and frees targets. Checks that no binding runs after its
/// `dispose()` returned (rule 6) or after its target was freed, that each applies one contiguous
/// run of the values the sink delivered (rules 2 and 13), and that a binding whose target is gone
/// is released at the next value (rule 7), and everything once the sink goes (rule 8).
@MainActor
final class BindingChaosRound {
  private let seed: UInt64
  private var random: SplitMix64
  private var sink: Sink<Int>? = Sink()
  private let delivered = ChaosSubjectLog(slot: 0, instance: 0, isVariable: false, initial: 0)
  private var targets: [ChaosTarget] = []
  private var bindings: [ChaosBinding] = []
  private let problems = LockedValue<[String]>([])
  private let nextValue = LockedValue(1)

  init(seed: UInt64) {
    self.seed = seed
    random = SplitMix64(seed: seed)
    let delivered = delivered
    sink!.signal.observe { delivered.record($0) }
  }

  var foundProblems: [String] { problems.current }

  private func problem(_ text: String) {
    problems.withLock { if $0.count < 20 { $0.append(text) } }
  }

  private func bind(choice: Int) {
    guard let sink else { return }
    let target = ChaosTarget()
    targets.append(target)
    let record = ChaosBinding(id: bindings.count, target: target.flag)
    bindings.append(record)
    let tracked = Tracked(record.captured)
    let problems = problems
    let apply: @MainActor (ChaosTarget, Int) -> Void = { target, value in
      withExtendedLifetime(tracked) {}
      let isDisposed = record.state.withLock { state in
        state.log.append(value)
        return state.isDisposed
      }
      if isDisposed {
        problems.withLock { $0.append("rule 6: binding \(record.id) applied \(value) after dispose()") }
      }
      target.value = value
    }
    let disposable: any Disposable
    switch choice % 3 {
    case 0: disposable = sink.signal.bind(to: target, binding: apply)
    case 1: disposable = sink.signal.bind(to: Binder(target: target, binding: apply))
    default:
      disposable = sink.signal.map { $0 }.observe(on: .mainActor) { value in
        // A binding by hand: a main-actor observer, as a view model writes one.
        apply(target, value)
      }
    }
    record.state.withLock { $0.disposable = disposable }
  }

  /// Disposes the binding of `record` on the calling thread.
  nonisolated private static func dispose(_ record: ChaosBinding) {
    let disposable = record.state.withLock { $0.disposable.take() }
    guard let disposable else { return }
    disposable.dispose()
    record.state.withLock { $0.isDisposed = true }
  }

  /// Runs the round: two threads send and dispose, the main actor binds, disposes, frees targets
  /// and sends too.
  func run(steps: Int) async {
    for index in 0..<4 { bind(choice: index) }
    let sink = sink!
    let snapshot = bindings
    let nextValue = nextValue
    let seed = seed
    let threadsDone = LockedValue(0)
    for thread in 0..<2 {
      Thread {
        var random = SplitMix64(seed: seed &+ UInt64(thread + 1))
        for _ in 0..<steps {
          let roll = Int.random(in: 0..<100, using: &random)
          if roll < 8 {
            Self.dispose(snapshot[Int.random(in: 0..<snapshot.count, using: &random)])
          } else if roll < 90 {
            sink.send(
              value: nextValue.withLock { value in
                defer { value += 1 }
                return value
              })
          } else {
            yieldThread()
          }
        }
        threadsDone.withLock { $0 += 1 }
      }.start()
    }
    var spins = 0
    while threadsDone.current < 2 && spins < 200_000 {
      spins += 1
      let roll = Int.random(in: 0..<100, using: &random)
      switch roll {
      case 0..<5: bind(choice: roll)
      case 5..<10: if !bindings.isEmpty { Self.dispose(bindings[Int.random(in: 0..<bindings.count, using: &random)]) }
      case 10..<15: if !targets.isEmpty { targets.remove(at: Int.random(in: 0..<targets.count, using: &random)) }
      case 15..<25:
        sink.send(
          value: nextValue.withLock { value in
            defer { value += 1 }
            return value
          })
      default: break
      }
      await Task.yield()
    }
    if threadsDone.current < 2 { problem("the sending threads did not finish (deadlock?)") }
  }

  /// Lets queued deliveries run, sends once more so that bindings whose target is gone end, and
  /// checks what every binding applied and released.
  func finish() async {
    for _ in 0..<3 { _ = await onMainQueue { true } }
    sink?.send(value: 0)
    for _ in 0..<3 { _ = await onMainQueue { true } }
    for record in bindings where record.target.isFreed && !record.captured.isFreed {
      problem("rule 7: binding \(record.id) kept after its target was freed and a value arrived")
    }
    let all = delivered.delivered
    for record in bindings {
      let log = record.state.current.log
      guard let first = log.first else { continue }
      guard let start = all.firstIndex(of: first), Array(all[start...].prefix(log.count)) == log else {
        problem("rules 2/13: binding \(record.id) applied \(log.prefix(12)), not a run of \(all.prefix(12))…")
        continue
      }
    }
    sink = nil
    targets = []
    let records = bindings
    var released = false
    for _ in 0..<20_000 where !released {
      released = records.allSatisfy { $0.captured.isFreed }
      if !released { try? await Task.sleep(nanoseconds: 1_000_000) }
    }
    if !released { problem("rule 8: a binding outlived its sink and target") }
  }
}
