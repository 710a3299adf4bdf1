import Dispatch
import Foundation

/// Finds deinits that run outside the domain their object belongs to (the main actor, or one
/// thread), and whether that domain was running code at the same moment.
///
/// The thread sanitizer does not report a race inside a deinit, so the tests of what Flux keeps
/// alive ask the deinit itself: each ``DomainProbe`` records, as it goes, whether it runs in its
/// domain, and whether code marked as the domain's own (``whileRunning(_:)``) was running then.
final class DomainDetector: @unchecked Sendable {
  private enum Domain {
    /// The main actor's: the main queue, found by queue identity (on Linux a worker thread may
    /// drain it).
    case mainQueue
    /// One thread's, once it has claimed it.
    case thread(pthread_t?)
  }

  private let lock = NSLock()
  // Guarded by `lock`.
  private var domain: Domain
  private var running = 0
  private var counts = Counts()

  /// What the probes recorded.
  struct Counts: Equatable {
    /// Probes freed.
    var freed = 0
    /// Probes freed outside the domain.
    var outside = 0
    /// Probes freed outside the domain while the domain ran code of its own.
    var overlapping = 0
  }

  private init(_ domain: Domain) {
    self.domain = domain
  }

  /// A detector for the main actor's domain.
  static func mainActor() -> DomainDetector {
    _ = MainActorTests.mainKey
    return DomainDetector(.mainQueue)
  }

  /// A detector for the domain of one thread, the first to call ``claim()``.
  static func thread() -> DomainDetector {
    DomainDetector(.thread(nil))
  }

  /// Makes the calling thread the domain.
  func claim() {
    let thread = currentThreadID()
    lock.withLock { domain = .thread(thread) }
  }

  /// Whether the caller runs in the domain.
  private var isInDomain: Bool {
    switch lock.withLock({ domain }) {
    case .mainQueue: MainActorTests.isOnMainQueue
    case .thread(let thread?): isCurrentThread(thread)
    case .thread(nil): false
    }
  }

  /// Runs `body`, the domain's own code, marked as running.
  func whileRunning<R>(_ body: () throws -> R) rethrows -> R {
    lock.withLock { running += 1 }
    defer { lock.withLock { running -= 1 } }
    return try body()
  }

  /// Called by a probe's deinit.
  fileprivate func recordFree() {
    let inDomain = isInDomain
    lock.withLock {
      counts.freed += 1
      if !inDomain {
        counts.outside += 1
        if running > 0 { counts.overlapping += 1 }
      }
    }
  }

  var current: Counts {
    lock.withLock { counts }
  }
}

/// A plain class, not `Sendable`, that belongs to one domain: its deinit tells its detector where
/// it ran.
final class DomainProbe {
  private let detector: DomainDetector
  /// State of the domain's own, as a non-Sendable object holds it.
  var touches = 0

  init(_ detector: DomainDetector) {
    self.detector = detector
  }

  deinit { detector.recordFree() }
}

/// Carries one value to another thread and gives it up there: what a test sends, it no longer
/// holds.
final class Handoff<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var value: Value?

  init(_ value: Value) {
    self.value = value
  }

  /// Takes the value out; the caller's reference is then the only one this handoff had.
  func take() -> Value? {
    lock.withLock {
      defer { value = nil }
      return value
    }
  }
}
