/// The live stores of one state type, for global dispatch.
///
/// Holds each store's core weakly, so it never keeps a store alive. A global dispatch walks a
/// snapshot taken under the lock (copy on write, no allocation) and hands the action to each
/// store whose core is still there; a store registered after the snapshot does not receive it,
/// a store freed meanwhile receives all of it or none.
final class StoreRegistry<State: FluxCore.State>: @unchecked Sendable {
  struct Entry {
    weak var core: StoreCore<State>?
  }

  private let lock = Lock()
  // Guarded by `lock`.
  private var stores = KeyedStorage<Entry>()

  /// The registry of `State`, created on first use.
  static var shared: StoreRegistry<State> {
    Registries.registry(for: State.self)
  }

  /// Adds `core` and returns the key to remove it with.
  func register(_ core: StoreCore<State>) -> UInt64 {
    lock.withLock { stores.insert(Entry(core: core)) }
  }

  /// Removes the store registered under `key`.
  func unregister(_ key: UInt64) {
    let removed = lock.withLock {
      let removed = stores.remove(key)
      stores.compactIfNeeded()
      return removed
    }
    _ = removed
  }

  /// Dispatches `action` to every store registered now.
  func dispatch(_ action: State.Action) {
    lock.lock()
    let snapshot = stores.slots
    lock.unlock()
    snapshot.withUnsafeBufferPointer { slots in
      for index in slots.indices {
        slots[index].element?.core?.dispatch(action)
      }
    }
  }
}

/// One ``StoreRegistry`` per state type, found in O(1) by the type's identity.
private enum Registries {
  private static let lock = Lock()
  // Guarded by `lock`.
  nonisolated(unsafe) private static var registries: [ObjectIdentifier: AnyObject] = [:]

  static func registry<State: FluxCore.State>(for type: State.Type) -> StoreRegistry<State> {
    lock.withLock {
      let key = ObjectIdentifier(type)
      if let registry = registries[key] {
        return unsafeDowncast(registry, to: StoreRegistry<State>.self)
      }
      let registry = StoreRegistry<State>()
      registries[key] = registry
      return registry
    }
  }
}
