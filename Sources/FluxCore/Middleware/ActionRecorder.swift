/// A middleware that keeps, in order, every action its store committed or cancelled.
///
/// Made for tests: assert "these actions, in this order" in one line.
///
/// ```swift
/// let recorder = ActionRecorder<CounterState>()
/// let store = Store<CounterState>(
///   state: .init(), mutations: .init(), executor: .immediate,
///   middlewares: [AnyMiddleware(recorder)])
/// store.actions.increment()
/// #expect(recorder.committed == [.increment])
/// ```
///
/// > Important: Thread-safe: read it from any thread while the store commits on another.
public final class ActionRecorder<State: FluxCore.State>: Middleware, @unchecked Sendable {
  /// What happened to one action.
  public enum Record {
    /// The action was committed.
    case committed(State.Action)
    /// A middleware cancelled the action.
    case cancelled(State.Action)
  }

  private let lock = Lock()
  // Guarded by `lock`.
  private var storage: [Record] = []

  /// Creates an empty recorder.
  public init() {}

  /// Every committed or cancelled action, in the order it happened.
  public var records: [Record] {
    lock.withLock { storage }
  }

  /// The committed actions, in commit order.
  public var committed: [State.Action] {
    records.compactMap { if case .committed(let action) = $0 { action } else { nil } }
  }

  /// The cancelled actions, in order.
  public var cancelled: [State.Action] {
    records.compactMap { if case .cancelled(let action) = $0 { action } else { nil } }
  }

  /// Forgets everything recorded so far.
  public func reset() {
    let forgotten = lock.withLock {
      defer { storage = [] }
      return storage
    }
    withExtendedLifetime(forgotten) {}  // the actions go here, after the lock: a deinit may read the recorder
  }

  /// Records the committed action.
  public func didCommit(action: State.Action, state: State) {
    lock.withLock { storage.append(.committed(action)) }
  }

  /// Records the cancelled action.
  public func didCancel(action: State.Action, state: State) {
    lock.withLock { storage.append(.cancelled(action)) }
  }
}

extension ActionRecorder.Record: Sendable {}
extension ActionRecorder.Record: Equatable where State.Action: Equatable {}
