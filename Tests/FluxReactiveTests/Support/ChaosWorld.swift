import Dispatch
import FluxCore
import Foundation

@testable import FluxReactive

// The shared state of one round of `ReactiveChaosTests`: subjects in slots that any thread may
// empty, the observations made of them, a scope, the owners of scoped observations and the tasks
// that iterate `values`. Every check an observer makes is recorded as a problem, never thrown, so
// a round always ends and reports what it saw.
//
// The test's own locks are never held while Flux code runs.

/// How an observation reaches its subject.
enum ChaosKind: CaseIterable, Sendable {
  case plain
  case mapped
  case immediate
  case queued
  case producer
  case scoped
  case values

  /// Whether the observer runs inside the subject's delivery, on the sending thread.
  var isSynchronous: Bool { self != .queued && self != .values }
}

/// What one subject instance delivered, in order, as its first observer saw it.
final class ChaosSubjectLog: @unchecked Sendable {
  let slot: Int
  let instance: Int
  let isVariable: Bool
  let initial: Int
  /// Guarded by `lock`.
  private var values: [Int] = []
  /// Guarded by `lock`: the observers of this subject running inside its delivery now.
  private var depth = 0
  private let lock = NSLock()

  /// Set when the subject is about to be freed, just before it releases its observers.
  let dropped = DeallocFlag()

  init(slot: Int, instance: Int, isVariable: Bool, initial: Int) {
    self.slot = slot
    self.instance = instance
    self.isVariable = isVariable
    self.initial = initial
  }

  /// Where this subject comes in the order of lock acquisition the round keeps.
  struct Order: Comparable {
    static let lowest = Order(slot: Int.min, instance: Int.min)
    let slot: Int
    let instance: Int

    static func < (lhs: Order, rhs: Order) -> Bool {
      (lhs.slot, lhs.instance) < (rhs.slot, rhs.instance)
    }
  }

  var order: Order { Order(slot: slot, instance: instance) }

  func record(_ value: Int) { lock.withLock { values.append(value) } }
  var delivered: [Int] { lock.withLock { values } }

  /// Enters a synchronous observer call; `false` if another one of this subject is running.
  func enter() -> Bool {
    lock.withLock {
      depth += 1
      return depth == 1
    }
  }

  func exit() { lock.withLock { depth -= 1 } }
}

/// A sink or a variable of `Int` in one slot of the world.
final class ChaosSubject: Sendable {
  let log: ChaosSubjectLog
  let sink: Sink<Int>?
  let variable: Variable<Int>?

  init(log: ChaosSubjectLog) {
    self.log = log
    if log.isVariable {
      sink = nil
      variable = Variable(log.initial)
    } else {
      sink = Sink()
      variable = nil
    }
  }

  deinit {
    log.dropped.markFreed()  // before `sink` or `variable` goes, releasing the observers
  }

  var signal: Signal<Int> { sink?.signal ?? variable!.signal }

  func send(_ value: Int, modifying: Bool) {
    if let sink {
      sink.send(value: value)
    } else if modifying {
      variable!.modify { $0 = value }
    } else {
      variable!.value = value
    }
  }
}

/// An object that bounds a scoped observation.
final class ChaosOwner: Sendable {
  let flag = DeallocFlag()
  deinit { flag.markFreed() }
}

/// One observation of a subject and what its observer saw.
final class ChaosObservation: @unchecked Sendable {
  struct State {
    var log: [Int] = []
    var isDisposed = false
    /// Whether a `dispose()` has been called, maybe still running.
    var isDisposing = false
    var isCalling = false
    var disposable: (any Disposable)?
    var task: Task<Void, Never>?
    var isFinished = false
    /// Kept by the scope, which may dispose it without the test knowing when.
    var isInScope = false
  }

  let id: Int
  let kind: ChaosKind
  let subject: ChaosSubjectLog
  /// The value being delivered when this observation was made from inside an observer of the
  /// same sink: rule 4 says it never arrives.
  let forbidden: Int?
  let owner: DeallocFlag?
  /// Freed with the observer's closure.
  let captured = DeallocFlag()
  let state = LockedValue(State())

  init(id: Int, kind: ChaosKind, subject: ChaosSubjectLog, forbidden: Int?, owner: DeallocFlag?) {
    self.id = id
    self.kind = kind
    self.subject = subject
    self.forbidden = forbidden
    self.owner = owner
  }
}

/// A deterministic choice made from a value and an observation, so that what observers do
/// depends on the seed, not on which thread runs them.
func chaosHash(_ a: Int, _ b: Int) -> Int {
  var generator = SplitMix64(seed: UInt64(bitPattern: Int64(a)) &* 0x9E37_79B9 ^ UInt64(bitPattern: Int64(b)))
  return Int(generator.next() % 1_000)
}
