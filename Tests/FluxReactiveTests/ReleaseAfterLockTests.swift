import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

/// Rule 16 as optimized builds compile it: what a sink or a variable lets go of (its observers,
/// their captures) is released after its lock, so a capture's deinit may wait for a thread that
/// is itself waiting for that lock. Each test is a lock-order scenario that deadlocks if the
/// release happens under the lock; the deadlock is detected by a time limit and reported.
@Suite("Released after the lock")
struct ReleaseAfterLockTests {
  @Test("inv16: a disposed observer's capture is freed after the sink's lock: its deinit may wait for a send")
  func inv16_disposedCaptureFreedAfterTheSinkLock() {
    for _ in 0..<20 {
      let sink = Sink<Int>()
      let scenario = UserLockScenario()
      let disposable = scenario.observe(sink.signal)
      let outcome = scenario.run(
        releasing: { disposable.dispose() },
        whileHoldingTheUserLock: { sink.send(value: 1) })
      #expect(outcome == .finished, "dispose() freed the observer's capture under the sink's lock")
      guard outcome == .finished else { return }
    }
  }

  @Test("inv16: a freed sink frees its observers' captures after its lock: their deinit may wait for an observe")
  func inv16_freedSinkFreesCapturesAfterItsLock() {
    for _ in 0..<20 {
      let holder = LockedValue<Sink<Int>?>(Sink<Int>())
      let signal = holder.current!.signal
      let scenario = UserLockScenario()
      let disposable = scenario.observe(signal)
      let outcome = scenario.run(
        releasing: { _ = holder.withLock { $0.take() } },
        whileHoldingTheUserLock: { signal.observe { _ in }.dispose() })
      #expect(outcome == .finished, "the freed sink freed its observers' captures under its lock")
      guard outcome == .finished else { return }
      withExtendedLifetime(disposable) {}
    }
  }

  @Test("inv16: a freed variable frees its observers' captures after its locks: their deinit may wait for a set")
  func inv16_freedVariableFreesCapturesAfterItsLocks() {
    for _ in 0..<20 {
      let holder = LockedValue<Variable<Int>?>(Variable(0))
      let signal = holder.current!.signal
      let other = Variable(0)
      let scenario = UserLockScenario()
      let disposable = scenario.observe(signal)
      let outcome = scenario.run(
        releasing: { _ = holder.withLock { $0.take() } },
        whileHoldingTheUserLock: {
          signal.observe { _ in }.dispose()
          other.value = 1
        })
      #expect(outcome == .finished, "the freed variable freed its observers' captures under its lock")
      guard outcome == .finished else { return }
      withExtendedLifetime(disposable) {}
    }
  }

  @Test(
    "inv16: a variable freed inside its own delivery frees its observers' captures after its lock, not when the delivery ends under it"
  )
  func inv16_variableFreedInsideItsDeliveryFreesCapturesAfterItsLock() {
    for _ in 0..<20 {
      let holder = LockedValue<Variable<Int>?>(Variable(0))
      let signal = holder.current!.signal
      let scenario = UserLockScenario()
      let kept = scenario.observe(signal)
      let outcome = scenario.run(
        // The replay of a new observer is a delivery; the variable's last reference goes in it.
        releasing: { signal.observe { _ in _ = holder.withLock { $0.take() } }.dispose() },
        whileHoldingTheUserLock: { signal.observe { _ in }.dispose() })
      #expect(outcome == .finished, "the delivery's end freed the observers' captures under the variable's lock")
      guard outcome == .finished else { return }
      withExtendedLifetime(kept) {}
    }
  }

  @Test(
    "inv16: a sink freed inside its own delivery frees its observers' captures after its lock, not when the delivery ends under it"
  )
  func inv16_sinkFreedInsideItsDeliveryFreesCapturesAfterItsLock() {
    for _ in 0..<20 {
      let holder = LockedValue<Sink<Int>?>(Sink<Int>())
      let core = holder.current!.core
      let signal = holder.current!.signal
      let scenario = UserLockScenario()
      let kept = scenario.observe(signal)
      let dropper = signal.observe { _ in _ = holder.withLock { $0.take() } }
      let outcome = scenario.run(
        // Sent through the core, as a sink's own `send` does: nothing else keeps the sink alive.
        releasing: { core.send(1) },
        whileHoldingTheUserLock: { signal.observe { _ in }.dispose() })
      #expect(outcome == .finished, "the delivery's end freed the observers' captures under the sink's lock")
      guard outcome == .finished else { return }
      withExtendedLifetime((kept, dropper)) {}
    }
  }
}

/// Two threads and a lock of the user's: an observer's capture takes that lock in its deinit,
/// and another thread, holding it, calls into the sink or variable meanwhile.
///
/// Releasing the capture after the subject's lock, the deinit waits for the other thread, which
/// goes through and lets go of the user's lock. Releasing it under the subject's lock, each
/// thread waits for the other: the scenario then reports a deadlock after ten seconds and leaves
/// the two threads behind.
private final class UserLockScenario: Sendable {
  enum Outcome: Equatable {
    case finished
    case deadlocked
    case captureNeverFreed
  }

  private let userLock = NSLock()
  /// Signalled by the capture's deinit, just before it takes the user's lock.
  private let freeing = DispatchSemaphore(value: 0)
  /// Signalled once the other thread holds the user's lock.
  private let holding = DispatchSemaphore(value: 0)
  private let freed = LockedValue(false)

  /// Observes `signal` with an observer whose capture takes the user's lock when freed.
  func observe(_ signal: Signal<Int>) -> any Disposable {
    let capture = TakesLockWhenFreed(scenario: self)
    return signal.observe { [capture] _ in _ = capture }
  }

  fileprivate func captureIsFreed() {
    freed.withLock { $0 = true }
    freeing.signal()
    userLock.lock()
    userLock.unlock()
  }

  /// Runs `release` on one thread once another holds the user's lock; that one, once the
  /// capture's deinit has begun, runs `touch` and lets go of the lock.
  func run(
    releasing release: @escaping @Sendable () -> Void, whileHoldingTheUserLock touch: @escaping @Sendable () -> Void
  )
    -> Outcome
  {
    let finished = finishOnThreads(2, within: 10) { [self] thread in
      if thread == 0 {
        holding.wait()
        release()
      } else {
        userLock.lock()
        holding.signal()
        _ = freeing.wait(timeout: .now() + .seconds(10))
        touch()
        userLock.unlock()
      }
    }
    if !finished { return .deadlocked }
    return freed.current ? .finished : .captureNeverFreed
  }
}

/// What an observer captures: its deinit takes the scenario's user lock.
private final class TakesLockWhenFreed: Sendable {
  let scenario: UserLockScenario

  init(scenario: UserLockScenario) {
    self.scenario = scenario
  }

  deinit { scenario.captureIsFreed() }
}
