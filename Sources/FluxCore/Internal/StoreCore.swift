/// The engine of a ``Store``: its state, its mutations and the queue of actions waiting for
/// their commit.
///
/// One drain at a time walks the queue and commits, so commits never overlap and keep dispatch
/// order on any executor. On ``Executor/immediate`` the dispatching thread drains at once; on
/// any other executor one drain is scheduled and runs until the queue is empty. An action
/// dispatched while a drain runs (from a mutation, say) joins the queue and is committed by
/// that drain after the current commit. The lock is never held while user code runs.
final class StoreCore<State: FluxCore.State>: @unchecked Sendable {
  let state: State
  let mutations: State.Mutations
  let executor: Executor
  private let isImmediate: Bool

  private let lock = Lock()
  // Guarded by `lock`: actions waiting for their commit, in dispatch order.
  private var queue = FIFOBuffer<State.Action>()
  // Guarded by `lock`: a drain is running or scheduled on the executor.
  private var isDraining = false
  // Guarded by `lock`: the store is gone; nothing more is committed.
  private var isCancelled = false

  init(state: State, mutations: State.Mutations, executor: Executor) {
    self.state = state
    self.mutations = mutations
    self.executor = executor
    self.isImmediate = executor.isImmediate
  }

  /// Queues `action` for its commit, and starts a drain if none runs.
  func dispatch(_ action: State.Action) {
    lock.lock()
    if isCancelled {
      lock.unlock()
      return
    }
    if isDraining {
      queue.append(action)
      lock.unlock()
      return
    }
    isDraining = true
    if isImmediate {
      lock.unlock()
      mutations.commit(action: action, state: state)
      drain()
    } else {
      queue.append(action)
      lock.unlock()
      executor.execute { [weak self] in self?.drain() }
    }
  }

  /// Commits queued actions one by one until the queue is empty or the store is cancelled.
  private func drain() {
    while true {
      lock.lock()
      guard !isCancelled, let action = queue.popFirst() else {
        isDraining = false
        lock.unlock()
        return
      }
      lock.unlock()
      mutations.commit(action: action, state: state)
    }
  }

  /// Drops every queued action and refuses later ones: the store has been freed.
  func cancel() {
    lock.lock()
    isCancelled = true
    let dropped = queue.removeAll()
    lock.unlock()
    _ = dropped
  }
}
