import Foundation

@testable import FluxReactive

// The end of a `ChaosRound`: everything is dropped, and what every observer saw is checked.

extension ChaosRound {
  /// Ends the round: drops everything, waits for queues and tasks, and checks what was seen.
  func finish() async {
    let records = world.withLock { $0.observations }
    do {
      // Taken out under the test's lock, released at the end of this block, outside it.
      let dropped = world.withLock { world in
        defer {
          world.subjects = Array(repeating: nil, count: Self.slotCount)
          world.owners = []
          world.scope = nil
          world.live = []
          world.scopesHandedOver = []
        }
        return (world.subjects, world.owners, world.scope, world.scopesHandedOver)
      }
      withExtendedLifetime(dropped) {}
    }
    for record in records { record.state.withLock { $0.disposable = nil } }
    for queue in queues { queue.sync {} }
    let tasksEnded = await eventuallyWithin(seconds: 20) {
      records.allSatisfy { record in record.state.withLock { $0.task == nil || $0.isFinished } }
    }
    if !tasksEnded { problem("a values loop did not end after its subject was freed") }
    for queue in queues { queue.sync {} }
    let released = await eventuallyWithin(seconds: 20) { records.allSatisfy { $0.captured.isFreed } }
    if !released {
      let kept = records.filter { !$0.captured.isFreed }.prefix(5).map { "\($0.id) (\($0.kind))" }
      problem("rule 8: observers kept after everything was dropped: \(kept)")
    }
    let (weakSubjects, weakScopes, logs, increments) = world.withLock {
      ($0.weakSubjects, $0.weakScopes, $0.logs, $0.increments)
    }
    let freed = await eventuallyWithin(seconds: 20) {
      weakSubjects.allSatisfy(\.isFreed) && weakScopes.allSatisfy { $0.scope == nil }
    }
    if !freed { problem("rule 8: a sink, variable or scope outlived its last reference") }
    for record in records { checkLog(of: record, against: logs[record.subject.instance].delivered) }
    let counted = counterLog.delivered
    if counter.value != increments { problem("rule 5: counter is \(counter.value), expected \(increments)") }
    // Two observers record into one log: the current value, then each change, twice, in order.
    if counted != (0...increments).flatMap({ [$0, $0] }) {
      problem("rule 5: counter observers saw \(counted.prefix(20))… for \(increments) increments")
    }
  }

  /// Checks that `record` saw one contiguous run of what its subject delivered, to the end if it
  /// was never disposed.
  private func checkLog(of record: ChaosObservation, against delivered: [Int]) {
    let state = record.state.current
    guard let first = state.log.first else { return }
    guard let start = delivered.firstIndex(of: first) else {
      problem("observation \(record.id) (\(record.kind)) got \(first), which its subject never delivered")
      return
    }
    let run = delivered[start...].prefix(state.log.count)
    if Array(run) != state.log {
      problem(
        "rules 2/5: observation \(record.id) (\(record.kind)) of subject \(record.subject.instance) saw "
          + "\(state.log.prefix(12)), expected \(Array(run.prefix(12)))")
      return
    }
    let mayHaveStopped = state.isDisposed || state.isInScope || (record.owner?.isFreed ?? false)
    if !mayHaveStopped && start + state.log.count != delivered.count {
      problem(
        "rule 5: observation \(record.id) (\(record.kind)) of subject \(record.subject.instance) stopped "
          + "after \(state.log.count) values; its subject delivered \(delivered.count - start) since")
    }
  }
}

/// A weak reference to a subject's sink or variable.
final class WeakSubject: @unchecked Sendable {
  // Written in `init` only.
  private weak var sink: Sink<Int>?
  private weak var variable: Variable<Int>?

  init(_ subject: ChaosSubject) {
    sink = subject.sink
    variable = subject.variable
  }

  var isFreed: Bool { sink == nil && variable == nil }
}

/// A weak reference to a scope.
final class WeakScope: @unchecked Sendable {
  // Written in `init` only.
  weak var scope: DisposableScope?

  init(_ scope: DisposableScope) {
    self.scope = scope
  }
}
