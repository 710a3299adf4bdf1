import Dispatch
import FluxCore
import Foundation

@testable import FluxReactive

/// One round of random concurrent use of sinks, variables, operators and scopes, from a seed.
///
/// Threads send, set and `modify`; observe in every way (`map` chains, `observe(on:)` on
/// `.immediate` and on serial queues, producer signals, `observe(duringScopeOf:)`, `values`);
/// dispose, free owners, drop subjects and scopes. Observers do the same from inside deliveries.
/// What each observer saw is checked against the first observer of its subject, which sees every
/// value: each observation sees one contiguous run of those values (rules 2, 3 and 5, nothing
/// lost or doubled), none after its `dispose()` returned (rule 6), not the value being delivered
/// when it was added to a sink (rule 4), none after its owner was freed (rule 7); every closure is
/// freed once disposed, and everything once the round drops it (rule 8).
///
/// To stay clear of the deadlocks the docs name (observers on two threads that wait for each
/// other's sinks, rule 3 and rule 6), subjects are ordered by slot, then by instance (a slot's
/// subject may be dropped and replaced by a newer one), and an observer waits only for subjects
/// that come later in that order: one of the subject in slot `i` sends only to its own subject or
/// to slots above `i`, disposes only observations of its own subject or later ones, and disposes
/// no scope, nor lets go of the last reference to one (whose deinit disposes what it holds);
/// observers on queues and in tasks only record.
final class ChaosRound: @unchecked Sendable {
  static let slotCount = 4

  let seed: UInt64
  let threadCount: Int
  let steps: Int
  let queues = (0..<2).map { DispatchQueue(label: "chaos.\($0)") }
  let counter = Variable(0)
  let counterLog = ChaosSubjectLog(slot: -1, instance: -1, isVariable: true, initial: 0)

  struct World {
    var subjects: [ChaosSubject?] = Array(repeating: nil, count: ChaosRound.slotCount)
    var logs: [ChaosSubjectLog] = []
    var weakSubjects: [WeakSubject] = []
    var observations: [ChaosObservation] = []
    var live: [ChaosObservation] = []
    var scope: DisposableScope? = DisposableScope()
    var scopeRecords: [ChaosObservation] = []
    /// Scopes an observer added to, handed over so that their last reference goes on a thread
    /// in no delivery (see `observe`).
    var scopesHandedOver: [DisposableScope] = []
    var weakScopes: [WeakScope] = []
    var owners: [ChaosOwner] = []
    var nextID = 0
    var nextValue = 1
    var reactionBudget = 0
    var increments = 0
    var problems: [String] = []
    var counts: [String: Int] = [:]
    var arrived = 0
  }

  let world = LockedValue(World())

  init(seed: UInt64, threadCount: Int, steps: Int) {
    self.seed = seed
    self.threadCount = threadCount
    self.steps = steps
    world.withLock {
      $0.reactionBudget = threadCount * steps
      $0.weakScopes.append(WeakScope($0.scope!))
    }
    let log = counterLog
    for _ in 0..<2 {
      counter.signal.observe { value in
        log.record(value)
      }
    }
  }

  var problems: [String] { world.current.problems }

  var counts: [String: Int] { world.current.counts }

  private func count(_ name: String) {
    world.withLock { $0.counts[name, default: 0] += 1 }
  }

  func problem(_ text: String) {
    world.withLock { if $0.problems.count < 20 { $0.problems.append(text) } }
  }

  private func nextValue() -> Int {
    world.withLock { world in
      defer { world.nextValue += 1 }
      return world.nextValue
    }
  }

  // MARK: Subjects

  /// The subject in `slot`, made (with its first observer) if the slot is empty.
  private func subject(at slot: Int) -> ChaosSubject {
    if let subject = world.withLock({ $0.subjects[slot] }) { return subject }
    let log = world.withLock { world in
      let log = ChaosSubjectLog(
        slot: slot, instance: world.logs.count, isVariable: slot % 2 == 1, initial: -(world.logs.count + 1))
      world.logs.append(log)
      return log
    }
    let made = ChaosSubject(log: log)
    made.signal.observe { value in
      log.record(value)
      let isReplay = log.isVariable && value == log.initial
      if isReplay { return }
      if !log.enter() { self.problem("rule 3: deliveries of subject \(log.instance) overlap") }
      self.react(to: value, in: log, id: -1 - log.instance, selfDisposable: nil)
      log.exit()
    }
    return world.withLock { world in
      if let present = world.subjects[slot] { return present }
      world.subjects[slot] = made
      world.weakSubjects.append(WeakSubject(made))
      return made
    }
  }

  private func dropSubject(at slot: Int) {
    let dropped = world.withLock { $0.subjects[slot].take() }
    withExtendedLifetime(dropped) {}  // outside the test's lock
  }

  // MARK: Observing

  /// Observes the subject in `slot` with an observation of `kind`, kept in the scope if `inScope`.
  private func observe(kind: ChaosKind, slot: Int, forbidden: Int?, inScope: Bool, choice: Int) {
    let subject = subject(at: slot)
    let owner: ChaosOwner? = kind == .scoped ? ChaosOwner() : nil
    let record = world.withLock { world in
      let record = ChaosObservation(
        id: world.nextID, kind: kind, subject: subject.log, forbidden: forbidden, owner: owner?.flag)
      world.nextID += 1
      world.observations.append(record)
      if let owner { world.owners.append(owner) }
      return record
    }
    count("observations \(kind)")
    let disposable = start(kind: kind, subject: subject, record: record, owner: owner, choice: choice)
    if let disposable { record.state.withLock { $0.disposable = disposable } }
    if inScope, let disposable {
      let scope = world.withLock { $0.scope }
      scope += disposable
      // A scope's deinit disposes what it holds, and a disposal waits for a delivery on another
      // thread: if a thread dropped the world's scope meanwhile, this reference could be the
      // last, and going inside a delivery it would wait for subjects that come earlier in the
      // round's order (a real deadlock, rule 3). The world takes it over; `run` lets it go.
      world.withLock { world in
        record.state.withLock { $0.isInScope = true }
        if world.scope === scope { world.scopeRecords.append(record) }
        if let scope { world.scopesHandedOver.append(scope) }
      }
    } else {
      world.withLock { $0.live.append(record) }
    }
  }

  /// Starts the observation of `record`; returns its disposable (`nil` for a `values` loop).
  ///
  /// The observer and what it captures are local to this function, so that once it returns
  /// only Flux holds them.
  private func start(
    kind: ChaosKind, subject: ChaosSubject, record: ChaosObservation, owner: ChaosOwner?, choice: Int
  ) -> (any Disposable)? {
    let tracked = Tracked(record.captured)
    let receive: @Sendable (Int) -> Void = { value in
      withExtendedLifetime(tracked) {}
      self.receive(value, record)
    }
    let signal = subject.log.isVariable && choice % 3 == 0 ? subject.variable!.constant.signal : subject.signal
    var disposable: (any Disposable)?
    switch kind {
    case .plain:
      disposable = signal.observe(receive)
    case .mapped:
      let offsets = (0...(choice % 3)).map { 1_000_000_000 * ($0 + 1) + choice }
      var mapped = signal
      for offset in offsets { mapped = mapped.map { $0 &+ offset } }
      let total = offsets.reduce(0, &+)
      disposable = mapped.observe { receive($0 &- total) }
    case .immediate:
      disposable = signal.observe(on: .immediate).observe(receive)
    case .queued:
      disposable = signal.observe(on: .queue(queues[choice % queues.count])).observe(receive)
    case .producer:
      disposable = Signal<Int> { send in signal.observe { send($0) } }.observe(receive)
    case .scoped:
      disposable = signal.observe(duringScopeOf: owner!, receive)
    case .values:
      let stream = signal.map { value in
        withExtendedLifetime(tracked) {}
        return value
      }.values
      let task = Task {
        for await value in stream { self.receive(value, record) }
        record.state.withLock { $0.isFinished = true }
      }
      record.state.withLock { $0.task = task }
    }
    return disposable
  }

  /// What every observer does with a value: checks it, records it, and on the sending thread
  /// reacts to it.
  private func receive(_ value: Int, _ record: ChaosObservation) {
    let subject = record.subject
    var issues: [String] = []
    let isReplay = record.state.withLock { state in
      if state.isDisposed && record.kind != .values {
        issues.append("rule 6: observation \(record.id) (\(record.kind)) called with \(value) after dispose()")
      }
      if state.isCalling { issues.append("observation \(record.id) (\(record.kind)) called while in a call") }
      state.isCalling = true
      defer { state.log.append(value) }
      return subject.isVariable && state.log.isEmpty
    }
    if let owner = record.owner, owner.isFreed {
      issues.append("rule 7: scoped observation \(record.id) called with \(value) after its owner was freed")
    }
    if let forbidden = record.forbidden, value == forbidden {
      issues.append("rule 4: observation \(record.id) added during the delivery of \(value) got it")
    }
    let inDelivery = record.kind.isSynchronous && !isReplay
    if inDelivery {
      if !subject.enter() { issues.append("rule 3: deliveries of subject \(subject.instance) overlap") }
      let disposable = record.state.withLock { $0.disposable }
      react(to: value, in: subject, id: record.id, selfDisposable: disposable.map { (record, $0) })
      subject.exit()
    }
    record.state.withLock { $0.isCalling = false }
    for issue in issues { problem(issue) }
  }

  /// What an observer of `source` does with `value`, inside its delivery.
  private func react(
    to value: Int, in source: ChaosSubjectLog, id: Int, selfDisposable: (ChaosObservation, any Disposable)?
  ) {
    let slot = source.slot
    let roll = chaosHash(value, id)
    count(roll < 150 ? "reactions" : "calls without reaction")
    // Observing and sending make more calls: a budget keeps a round from growing without end.
    let makesCalls = (20..<45).contains(roll) || (65..<95).contains(roll)
    if makesCalls {
      let hasBudget = world.withLock { world in
        guard world.reactionBudget > 0 else { return false }
        world.reactionBudget -= 1
        return true
      }
      guard hasBudget else { return }
    }
    let higher = slot + 1 + roll % max(1, Self.slotCount - slot - 1)
    switch roll {
    case 0..<20:
      if let (record, disposable) = selfDisposable { dispose(record, disposable, checkRelease: false) }
    case 20..<45:
      let target = roll % 2 == 0 || slot == Self.slotCount - 1 ? slot : higher
      let kind = ChaosKind.allCases[roll % ChaosKind.allCases.count]
      let forbidden = target == slot && slot % 2 == 0 ? value : nil
      observe(kind: kind, slot: target, forbidden: forbidden, inScope: roll % 5 == 0, choice: roll)
    case 45..<65:
      disposeOne(atLeast: source.order, choice: roll, checkRelease: false)
    case 65..<80:
      subject(at: slot).send(nextValue(), modifying: roll % 2 == 0)
    case 80..<95 where slot < Self.slotCount - 1:
      subject(at: higher).send(nextValue(), modifying: roll % 2 == 0)
    case 95..<100:
      dropSubject(at: slot)
    case 100..<110:
      freeOwner(choice: roll)
    case 110..<140:
      let variables = world.withLock { $0.subjects.compactMap { $0?.variable } }
      for variable in variables { _ = variable.value }
      _ = counter.value
    case 140..<150:
      increment()
    default:
      break
    }
  }

  // MARK: Disposing

  private func dispose(_ record: ChaosObservation, _ disposable: any Disposable, checkRelease: Bool) {
    // A second `dispose()` may return while the first, from inside a delivery on another
    // thread, has removed the observer but that delivery still holds it: only the first checks.
    let isFirst = record.state.withLock { state in
      defer { state.isDisposing = true }
      return !state.isDisposing
    }
    disposable.dispose()
    record.state.withLock { $0.isDisposed = true }
    count(checkRelease ? "disposals" : "disposals in deliveries")
    // A scoped observation disposes itself, from inside a delivery, once its owner is gone.
    guard checkRelease, isFirst, !(record.owner?.isFreed ?? false) else { return }
    if !disposable.isDisposed { problem("rule 6: observation \(record.id) not disposed after dispose()") }
    // A subject freed on another thread meanwhile releases its observers there, after its lock.
    if !record.captured.isFreed && !record.subject.dropped.isFreed {
      let log = record.state.current.log
      usleep(20_000)
      // An owner's weak references read `nil` from the start of its deinit, which sets the flag
      // a moment later: a scoped observer may have disposed itself in between.
      if record.owner?.isFreed ?? false { return }
      problem(
        "rule 6: observation \(record.id) (\(record.kind)) of subject \(record.subject.instance) "
          + "(\(record.subject.isVariable ? "variable" : "sink")) not released when dispose() returned; "
          + "saw \(log.count) values; released 20 ms later: \(record.captured.isFreed)")
    }
  }

  /// Disposes one live observation of a slot `minimum` or above, picked by `choice`.
  private func disposeOne(atLeast minimum: ChaosSubjectLog.Order, choice: Int, checkRelease: Bool) {
    let picked: ChaosObservation? = world.withLock { world in
      let candidates = world.live.indices.filter { world.live[$0].subject.order >= minimum }
      guard !candidates.isEmpty else { return nil }
      return world.live.remove(at: candidates[choice % candidates.count])
    }
    guard let picked else { return }
    let (disposable, task) = picked.state.withLock { ($0.disposable, $0.task) }
    if let disposable { dispose(picked, disposable, checkRelease: checkRelease) }
    if let task {
      task.cancel()
      picked.state.withLock { $0.isDisposed = true }
    }
  }

  private func freeOwner(choice: Int) {
    let owner: ChaosOwner? = world.withLock { world in
      world.owners.isEmpty ? nil : world.owners.remove(at: choice % world.owners.count)
    }
    withExtendedLifetime(owner) {}
  }

  private func increment() {
    counter.modify { $0 += 1 }
    world.withLock { $0.increments += 1 }
  }

  // MARK: Running

  /// What one thread does, `steps` times.
  func run(thread: Int) {
    var random = SplitMix64(seed: seed &+ UInt64(thread) &* 0x1_0000_0001)
    // Every thread starts its steps once all are running, so that the steps overlap.
    world.withLock { $0.arrived += 1 }
    while world.withLock({ $0.arrived }) < threadCount { yieldThread() }
    for _ in 0..<steps {
      // Outside every delivery: a scope whose last reference goes here may wait for one.
      let handedOver = world.withLock { world in
        defer { world.scopesHandedOver = [] }
        return world.scopesHandedOver
      }
      withExtendedLifetime(handedOver) {}
      let roll = Int.random(in: 0..<1_000, using: &random)
      let slot = Int.random(in: 0..<Self.slotCount, using: &random)
      let choice = Int.random(in: 0..<1_000, using: &random)
      switch roll {
      case 0..<380:
        subject(at: slot).send(nextValue(), modifying: choice % 2 == 0)
      case 380..<560:
        let kind = ChaosKind.allCases[choice % ChaosKind.allCases.count]
        observe(kind: kind, slot: slot, forbidden: nil, inScope: choice % 4 == 0, choice: choice)
      case 560..<700:
        disposeOne(atLeast: .lowest, choice: choice, checkRelease: true)
      case 700..<730:
        disposeScope(dropping: choice % 2 == 0)
      case 730..<780:
        freeOwner(choice: choice)
      case 780..<810:
        dropSubject(at: slot)
      case 810..<880:
        increment()
      default:
        for _ in 0..<(choice % 4) { yieldThread() }
      }
    }
  }

  /// Disposes the scope, or drops it, and puts a new one in its place.
  private func disposeScope(dropping: Bool) {
    let (taken, records) = world.withLock { world in
      let taken = world.scope.take()
      let records = world.scopeRecords
      world.scopeRecords = []
      let fresh = DisposableScope()
      world.scope = fresh
      world.weakScopes.append(WeakScope(fresh))
      return (taken, records)
    }
    guard var taken else { return }
    if dropping {
      let weak = WeakScope(taken)
      taken = DisposableScope()  // the last reference, unless another thread holds one now
      guard weak.scope == nil else { return }
    } else {
      taken.dispose()
    }
    for record in records {
      let wasDisposing = record.state.withLock { state in
        defer { state.isDisposed = true }
        return state.isDisposing
      }
      let mayBeHeld = wasDisposing || (record.owner?.isFreed ?? false) || record.subject.dropped.isFreed
      if !mayBeHeld, !record.captured.isFreed {
        problem("rule 6: observation \(record.id) (\(record.kind)) not released once its scope was disposed")
      }
    }
  }
}
