/// A proxy that dispatches actions to one store, or to every live store of a state type.
///
/// Extend it with functions that name what happens, for one state type:
///
/// ```swift
/// extension Actions where State == CounterState {
///   func increment() { dispatch(action: .increment) }
///   func decrement() { dispatch(action: .decrement) }
/// }
///
/// store.actions.increment()                 // this store only
/// Store<CounterState>.actions.increment()   // every live store of CounterState
/// ```
///
/// An action function may do asynchronous work first (a network request, say) and dispatch
/// when it is done.
///
/// > Important: ``dispatch(action:)`` never blocks on a commit: it hands the action to the
/// > store, which commits it on its ``Executor``. On ``Executor/immediate`` the commit runs
/// > before `dispatch` returns, unless the same store is committing on another thread at that
/// > moment; then that thread commits it next, in order. Dispatching through the ``Actions``
/// > of a store that has been freed does nothing.
public struct Actions<State: FluxCore.State>: Sendable {
  // Exactly one of the two is set: one store's core, or the registry of a state type. The core
  // is held strongly but keeps nothing alive: when its store is freed, it drops the state and
  // the mutations and refuses every later action. The registry is never freed (`Registries`
  // keeps every one for the life of the process), so holding it costs no reference count.
  @usableFromInline
  let core: StoreCore<State>?
  @usableFromInline
  let registry: Unmanaged<StoreRegistry<State>>?

  init(core: StoreCore<State>) {
    self.core = core
    self.registry = nil
  }

  @inlinable
  init(registry: Unmanaged<StoreRegistry<State>>) {
    self.core = nil
    self.registry = registry
  }

  /// Dispatches `action` to the target store or stores.
  ///
  /// - Parameter action: The action to commit.
  @inlinable
  public func dispatch(action: State.Action) {
    // Optional chaining borrows the core from this value; `if let` would retain it.
    if core != nil {
      core?.dispatch(action)
    } else {
      registry?._withUnsafeGuaranteedRef { $0.dispatch(action) }
    }
  }

  /// Whether an action dispatched now would reach a store: the store is alive, or (for
  /// `Store<S>.actions`) at least one store of the state type is. A store may be freed right
  /// after this returns `true`.
  package var reachesAStore: Bool {
    if let core { return !core.isStoreFreed }
    return registry?._withUnsafeGuaranteedRef { $0.hasStores } ?? false
  }

  /// Dispatches `action`; `completion` learns whether it was committed.
  func dispatch(action: State.Action, completion: @escaping @Sendable (Bool) -> Void) {
    if let registry {
      registry.takeUnretainedValue().dispatch(action, completion: completion)
    } else if let core {
      core.dispatch(action, completion: completion)
    } else {
      completion(false)
    }
  }
}
