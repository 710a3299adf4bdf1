import FluxCore

/// The middleware a ``StoreTester`` installs: it keeps what its store committed or cancelled
/// since the tester last looked.
final class TesterRecorder<State: FluxCore.State>: Middleware, @unchecked Sendable {
  /// What happened to one action.
  enum Record {
    case committed(State.Action)
    case cancelled(State.Action)
  }

  // `records` is guarded by `lock`.
  private let lock = Lock()
  private var records: [Record] = []

  /// How many records wait to be taken.
  var count: Int {
    lock.withLock { records.count }
  }

  /// The records kept so far, oldest first; they are forgotten here.
  func takeAll() -> [Record] {
    lock.withLock {
      defer { records = [] }
      return records
    }
  }

  func didCommit(action: State.Action, state: State) {
    lock.withLock { records.append(.committed(action)) }
  }

  func didCancel(action: State.Action, state: State) {
    lock.withLock { records.append(.cancelled(action)) }
  }
}
