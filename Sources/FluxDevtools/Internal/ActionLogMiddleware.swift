import Dispatch
import FluxCore
import Foundation

/// The middleware of one store that writes to an ``ActionLog``.
///
/// With snapshots, it takes the state's snapshot in `didCommit`, where the state is as the
/// commit left it; with a log that reads traces, it reads the action's ``ActionTrace`` there
/// and in `didCancel`, where the store makes it current for its own hooks.
struct ActionLogMiddleware<State: FluxCore.State>: Middleware where State.Action: Encodable {
  let log: ActionLog
  let label: String
  let snapshots: StateSnapshots<State>?
  let clock = CommitClock()
  /// The state type, with its module, for ``ActionLog/Fields/swift``.
  let stateType = String(reflecting: State.self)

  func willCommit(action: State.Action, state: State) {
    clock.start()
  }

  func didCommit(action: State.Action, state: State) {
    let duration = clock.stop()
    log.append(
      label: label, outcome: .committed, duration: duration, action: action, state: snapshots?.take(state),
      trace: log.readsTraces ? ActionTrace.current(for: state) : nil,
      types: (stateType, snapshots?.form))
  }

  func didCancel(action: State.Action, state: State) {
    log.append(
      label: label, outcome: .cancelled, duration: nil, action: action,
      trace: log.readsTraces ? ActionTrace.current(for: state) : nil,
      types: (stateType, snapshots?.form))
  }
}

/// When the commit under way began. The hooks of one store never overlap, but may run on
/// different threads, one after the other.
final class CommitClock: @unchecked Sendable {
  // `started` is guarded by `lock`.
  private let lock = Lock()
  private var started: UInt64 = 0

  func start() {
    let now = DispatchTime.now().uptimeNanoseconds
    lock.withLock { started = now }
  }

  func stop() -> UInt64 {
    let now = DispatchTime.now().uptimeNanoseconds
    return lock.withLock { now &- started }
  }
}
