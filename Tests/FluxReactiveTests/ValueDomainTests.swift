import Dispatch
import FluxCore
import FluxReactive
import Foundation
import Testing

/// How a `Sendable` disposable of an observation of a non-`Sendable` value leaves its thread.
enum DisposableEscape: String, CaseIterable, Sendable, CustomTestStringConvertible {
  /// The disposable of `variable.signal.observe`, itself.
  case disposable = "the disposable itself"
  /// A scope holding it.
  case scope = "a DisposableScope holding it"
  /// The disposable of an observation of `variable.constant`.
  case constant = "the disposable of its .constant's observation"
  /// The disposable of a scoped observation.
  case scopedObservation = "the disposable of observe(duringScopeOf:)"
  /// The disposable of an observation of a fixed `Constant`.
  case fixedConstant = "the disposable of a Constant(value)'s observation"

  var testDescription: String { rawValue }
}

@Suite("A variable's value stays on its thread")
struct ValueDomainTests {
  /// Observes a variable (or constant) holding `probe` the way `escape` says, and returns the
  /// `Sendable` disposable that can leave the thread. Everything else made here is freed when
  /// this returns.
  static func observe(_ probe: DomainProbe, _ escape: DisposableEscape, owner: ScopeOwner) -> any Disposable {
    switch escape {
    case .disposable:
      let variable = Variable(probe)
      return variable.signal.observe { _ in }
    case .scope:
      let variable = Variable(probe)
      let scope = DisposableScope()
      scope += variable.signal.observe { _ in }
      return scope
    case .constant:
      let variable = Variable(probe)
      let constant = variable.constant
      return constant.signal.observe { _ in }
    case .scopedObservation:
      let variable = Variable(probe)
      return variable.signal.observe(duringScopeOf: owner) { _ in }
    case .fixedConstant:
      return Constant(probe).signal.observe { _ in }
    }
  }

  @Test(
    "a non-Sendable value is freed on its own thread, when a disposable that outlives its variable goes elsewhere",
    arguments: DisposableEscape.allCases)
  func nonSendableValueFreedOnItsThreadWhenItsDisposableGoesElsewhere(escape: DisposableEscape) {
    let detector = DomainDetector.thread()
    let rounds = 2_000
    let owner = ScopeOwner()
    let sent = LockedValue<[any Disposable]>([])
    let sending = LockedValue(true)
    runOnThreads(2) { index in
      if index == 0 {
        // The values' own thread: it makes each variable, observes it, lets the variable go,
        // and sends the disposable away, all while running code of its own.
        detector.claim()
        detector.whileRunning {
          for _ in 0..<rounds {
            let disposable = Self.observe(DomainProbe(detector), escape, owner: owner)
            sent.withLock { $0.append(disposable) }
          }
        }
        sending.withLock { $0 = false }
      } else {
        // Another thread disposes what it receives, and lets it go.
        while true {
          let received = sent.withLock { sent in
            defer { sent.removeAll() }
            return sent
          }
          for disposable in received { disposable.dispose() }
          if received.isEmpty && !sending.current { break }
          yieldThread()
        }
      }
    }
    let counts = detector.current
    #expect(counts.freed == rounds, "every value is freed")
    #expect(counts.outside == 0, "\(counts.outside) of \(counts.freed) values freed off their thread")
    #expect(counts.overlapping == 0, "\(counts.overlapping) while their thread ran")
  }

  @Test("every value a variable held, replaced or last, is freed on its thread, while their disposables go elsewhere")
  func everyValueFreedOnItsThreadWhileDisposablesGoElsewhere() {
    let detector = DomainDetector.thread()
    let rounds = 1_000
    let sent = LockedValue<[any Disposable]>([])
    let handedOver = DispatchSemaphore(value: 0)
    let disposed = DispatchSemaphore(value: 0)
    // Both threads live until the end, so neither can take the other's identity.
    runOnThreads(2) { index in
      if index == 0 {
        detector.claim()
        do {
          let variable = Variable(DomainProbe(detector))
          for _ in 0..<rounds {
            sent.withLock { $0.append(variable.signal.observe { _ in }) }
            variable.value = DomainProbe(detector)
          }
        }
        handedOver.signal()
        disposed.wait()
      } else {
        handedOver.wait()
        sent.withLock { sent in
          for disposable in sent { disposable.dispose() }
          sent.removeAll()
        }
        disposed.signal()
      }
    }
    let counts = detector.current
    #expect(counts.freed == rounds + 1)
    #expect(counts.outside == 0, "\(counts.outside) of \(counts.freed) values freed off their thread")
  }
}
