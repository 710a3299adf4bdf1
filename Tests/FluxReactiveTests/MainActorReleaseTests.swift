import Dispatch
import FluxCore
import FluxReactive
import Foundation
import Testing

/// A main-actor view: the target of the bindings below.
@MainActor final class ReleaseTarget {
  var count = 0
}

/// The functions that take a closure isolated to the main actor.
enum MainActorClosureKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case observeOnMainActor = "observe(on: .mainActor)"
  case bindWithClosure = "bind(to:on:binding:)"
  case binder = "Binder(target:binding:)"

  var testDescription: String { rawValue }
}

/// How an observation ends off the main actor.
enum OffMainEnding: String, CaseIterable, Sendable, CustomTestStringConvertible {
  /// Its sink is freed on another thread.
  case sinkFreed = "its sink freed on another thread"
  /// It is disposed on another thread.
  case disposed = "disposed on another thread"

  var testDescription: String { rawValue }
}

/// What a test hands to another thread to end an observation there.
struct OffMainEnd: Sendable {
  /// The sink, when the other thread frees it; otherwise the main actor keeps it.
  var sink: Sink<Int>?
  let observation: any Disposable

  func end() {
    observation.dispose()
  }
}

@Suite("A main-actor closure is released on the main actor")
struct MainActorReleaseTests {
  /// Starts an observation with a main-actor closure that captures `probe` (a plain class, not
  /// `Sendable`), and returns what ends it off the main actor. The caller keeps nothing else
  /// that holds the closure: `probe` goes with the closure.
  @MainActor
  static func start(
    _ kind: MainActorClosureKind, _ ending: OffMainEnding, probe: DomainProbe, target: ReleaseTarget,
    keeping kept: inout [Sink<Int>]
  ) -> Handoff<OffMainEnd> {
    let sink = Sink<Int>()
    let observation: any Disposable
    switch kind {
    case .observeOnMainActor:
      observation = sink.signal.observe(on: .mainActor) { value in probe.touches += value }
    case .bindWithClosure:
      observation = sink.signal.bind(to: target) { target, value in
        probe.touches += value
        target.count = value
      }
    case .binder:
      observation = Binder(target: target) { target, value in
        probe.touches += value
        target.count = value
      }.bind(signal: sink.signal)
    }
    switch ending {
    case .sinkFreed:
      return Handoff(OffMainEnd(sink: sink, observation: observation))
    case .disposed:
      kept.append(sink)
      return Handoff(OffMainEnd(sink: nil, observation: observation))
    }
  }

  @Test(
    "inv7: a main-actor closure's captures are freed on the main actor, whatever thread ends its observation",
    arguments: MainActorClosureKind.allCases, OffMainEnding.allCases)
  @MainActor
  func inv7_mainActorClosureCapturesFreedOnMainActor(kind: MainActorClosureKind, ending: OffMainEnding) async {
    let detector = DomainDetector.mainActor()
    let rounds = 200
    let target = ReleaseTarget()
    // The main actor's own state, which it changes while the other thread ends observations.
    let own = DomainProbe(detector)
    var kept: [Sink<Int>] = []
    var ends: [Handoff<OffMainEnd>] = []
    for _ in 0..<rounds {
      ends.append(Self.start(kind, ending, probe: DomainProbe(detector), target: target, keeping: &kept))
    }
    let finished = LockedValue(false)
    let ender = Thread { [ends] in
      for handoff in ends {
        guard let end = handoff.take() else { continue }
        end.sink?.send(value: 1)  // a value waits on the main queue as its observation ends
        end.end()
      }
      finished.withLock { $0 = true }
    }
    ender.start()
    // The main actor runs its own code meanwhile, as an app does.
    while !finished.current {
      detector.whileRunning { own.touches += 1 }
    }
    #expect(await eventuallyOnMainActor { detector.current.freed == rounds }, "every capture is freed")
    let counts = detector.current
    #expect(counts.outside == 0, "\(counts.outside) of \(counts.freed) captures freed off the main actor")
    #expect(counts.overlapping == 0, "\(counts.overlapping) while the main actor ran")
    withExtendedLifetime((target, own, kept)) {}
  }

  @Test(
    "inv7: a main-actor closure's captures are freed on the main actor when an idle main queue takes them at once",
    arguments: MainActorClosureKind.allCases, OffMainEnding.allCases)
  @MainActor
  func inv7_mainActorClosureCapturesFreedOnMainActorWhenTheMainQueueIsIdle(
    kind: MainActorClosureKind, ending: OffMainEnding
  ) async {
    let detector = DomainDetector.mainActor()
    let rounds = 500
    let target = ReleaseTarget()
    var kept: [Sink<Int>] = []
    var ends: [Handoff<OffMainEnd>] = []
    for _ in 0..<rounds {
      ends.append(Self.start(kind, ending, probe: DomainProbe(detector), target: target, keeping: &kept))
    }
    let finished = LockedValue(false)
    let ender = Thread { [ends] in
      for handoff in ends {
        guard let end = handoff.take() else { continue }
        end.end()
        // A pause, so that the main queue waits for work when the next observation ends: the
        // closure handed to it then runs at once, racing what the ending thread still holds.
        usleep(50)
      }
      finished.withLock { $0 = true }
    }
    ender.start()
    // The main actor waits, suspended, so that the main queue runs each handoff as it comes.
    while !finished.current { try? await Task.sleep(nanoseconds: 1_000_000) }
    #expect(await eventuallyOnMainActor { detector.current.freed == rounds }, "every capture is freed")
    let counts = detector.current
    #expect(counts.outside == 0, "\(counts.outside) of \(counts.freed) captures freed off the main actor")
    withExtendedLifetime((target, kept)) {}
  }

  /// A signal whose observations end as they start.
  enum EndedSignal: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case freedSink = "a freed sink's signal"
    case producerThatLetsGo = "a producer that lets go of its observer at once"

    var testDescription: String { rawValue }

    var signal: Signal<Int> {
      switch self {
      case .freedSink: Sink<Int>().signal
      case .producerThatLetsGo: Signal { _ in AnyDisposable() }
      }
    }
  }

  @Test(
    "inv7: a main-actor observer given off the main actor to a signal that ends at once goes on the main actor",
    arguments: EndedSignal.allCases)
  @MainActor
  func inv7_mainActorObserverGivenOffMainToAnEndedSignalGoesOnMainActor(ended: EndedSignal) async {
    let detector = DomainDetector.mainActor()
    let rounds = 1_000
    let finished = LockedValue(false)
    let observer = Thread {
      for _ in 0..<rounds {
        // The closure holds the only reference to its probe, and the call the only one to the
        // closure: what the call site keeps goes when the call returns.
        ended.signal.observe(on: .mainActor) { [probe = DomainProbe(detector)] value in probe.touches += value }
        usleep(50)  // the main queue waits for work when the next observation ends
      }
      finished.withLock { $0 = true }
    }
    observer.start()
    while !finished.current { try? await Task.sleep(nanoseconds: 1_000_000) }
    #expect(await eventuallyOnMainActor { detector.current.freed == rounds }, "every capture is freed")
    let counts = detector.current
    #expect(counts.outside == 0, "\(counts.outside) of \(counts.freed) captures freed off the main actor")
  }
}
