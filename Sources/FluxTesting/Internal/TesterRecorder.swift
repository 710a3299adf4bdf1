import FluxCore

/// The middleware a ``StoreTester`` installs: it keeps what its store committed or cancelled
/// since the tester last looked.
final class TesterRecorder<State: FluxCore.State>: Middleware, @unchecked Sendable {
  /// What happened to one action.
  enum Record {
    case committed(State.Action)
    case cancelled(State.Action)
  }

  // `records`, `describesState` and `stateDescription` are guarded by `lock`.
  private let lock = Lock()
  private var records: [Record] = []
  /// Whether each commit or cancel leaves a description of the state: while a state check waits.
  private var describesState = false
  private var stateDescription: String?

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

  /// From now on, each commit or cancel describes the state it leaves, in the store's drain:
  /// where a commit never runs beside it.
  func startDescribing() {
    lock.withLock { (describesState, stateDescription) = (true, nil) }
  }

  /// Stops describing the state; returns the description the last commit or cancel since
  /// ``startDescribing()`` left, if any did.
  func stopDescribing() -> String? {
    lock.withLock {
      defer { (describesState, stateDescription) = (false, nil) }
      return stateDescription
    }
  }

  func didCommit(action: State.Action, state: State) {
    let describes = lock.withLock {
      records.append(.committed(action))
      return describesState
    }
    if describes { describe(state) }
  }

  func didCancel(action: State.Action, state: State) {
    let describes = lock.withLock {
      records.append(.cancelled(action))
      return describesState
    }
    if describes { describe(state) }
  }

  /// Describes `state` after the lock: a state's own `description` is the user's code.
  private func describe(_ state: State) {
    let description = StateDescription.describe(state)
    lock.withLock { if describesState { stateDescription = description } }
  }
}
