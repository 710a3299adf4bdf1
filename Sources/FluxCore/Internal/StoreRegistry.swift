#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

/// The live stores of one state type, for global dispatch.
///
/// Holds each store's core, never the store: a store unregisters when freed, and its core then
/// refuses every action and has dropped its state. A global dispatch walks a snapshot of the
/// cores, published by ``cell`` without the lock (or copied under it: copy on write, no
/// allocation), and hands the action to each store whose core is still there; a store
/// registered after the snapshot does not receive it, a store freed meanwhile receives all of it
/// or none.
// `@unchecked Sendable`: `stores` is guarded by `lock`; `cell` is shared under the protocol
// described on ``SnapshotCell`` (atomics, and its retired boxes under the same `lock`).
@usableFromInline
final class StoreRegistry<State: FluxCore.State>: SharedMiddlewareReceiver, @unchecked Sendable {
  @usableFromInline
  struct Entry {
    @usableFromInline
    let core: StoreCore<State>

    init(core: StoreCore<State>) {
      self.core = core
    }
  }

  @usableFromInline
  let lock = Lock()
  // Guarded by `lock`.
  @usableFromInline @exclusivity(unchecked)
  var stores = KeyedStorage<Entry>()
  /// The cores as global dispatches walk them; told of every change of `stores`.
  @usableFromInline
  let cell: SnapshotCell<Walk>

  /// How many registered stores trace their actions (``StoreCore/tracesActions``, fixed when
  /// the store is made); guarded by `lock`, and changed with `stores`.
  @usableFromInline @exclusivity(unchecked)
  var tracingStores = 0

  /// What a global dispatch walks: the cores, and whether one of them may trace its actions.
  /// Published together, under the lock, so a walk that holds a store that traces knows it.
  @usableFromInline
  struct Walk {
    @usableFromInline
    let slots: ContiguousArray<KeyedStorage<Entry>.Slot>
    @usableFromInline
    let anyStoreTraces: Bool

    @inlinable
    init(slots: ContiguousArray<KeyedStorage<Entry>.Slot>, anyStoreTraces: Bool) {
      self.slots = slots
      self.anyStoreTraces = anyStoreTraces
    }
  }

  /// Counts `core` in (`delta` 1) or out (-1) of ``tracingStores``; called with `lock` held.
  private func counting(_ core: StoreCore<State>, by delta: Int) {
    if core.tracesActions { tracingStores &+= delta }
  }

  init() {
    cell = SnapshotCell(lock: lock)
  }

  /// The registry of `State`, created on first use.
  @inlinable
  static var shared: Unmanaged<StoreRegistry<State>> {
    Registries.registry(for: State.self)
  }

  /// Adds `core` and returns the key to remove it with, and the snapshots it retired, for the
  /// caller to release once it holds no lock: a retired snapshot may hold the last reference to
  /// the core of a freed store, whose mutations and executor the user gave.
  func register(_ core: StoreCore<State>) -> (key: UInt64, retired: [AnyObject]) {
    lock.withLock {
      let retired = cell.invalidate()
      counting(core, by: 1)
      return (stores.insert(Entry(core: core)), retired)
    }
  }

  /// Removes the store registered under `key`.
  func unregister(_ key: UInt64) {
    let released = lock.withLock {
      let retired = cell.invalidate()
      let removed = stores.remove(key)
      if let removed { counting(removed.core, by: -1) }
      stores.compactIfNeeded()
      return (removed, retired)
    }
    withExtendedLifetime(released) {}  // released after the lock
  }

  /// The cores registered now, copied under the lock.
  @inlinable
  var snapshot: ContiguousArray<KeyedStorage<Entry>.Slot> {
    lock.lock()
    defer { lock.unlock() }
    return stores.slots
  }

  /// Whether a store is registered now.
  var hasStores: Bool {
    lock.withLock { !stores.isEmpty }
  }

  /// Dispatches `action` to every store registered now.
  @inlinable
  func dispatch(_ action: State.Action) {
    // The snapshot keeps every core alive for the walk, so each is borrowed from it (optional
    // chaining reads the element in place), not retained and released.
    cell.read(orPublish: Walk(slots: stores.slots, anyStoreTraces: tracingStores != 0)) { walk in
      let slots = walk.slots
      let count = slots.count
      var index = 0
      // Known once for the whole walk, from the walk itself: a store made during it may or may
      // not receive the action anyway, and a store's tracing never changes. Only stores that
      // trace pay for the number.
      guard walk.anyStoreTraces else {
        while index < count {
          // Reading the lane of a core 16 stores ahead brings it into the cache by the time its
          // turn comes (the core is alive: the snapshot holds it): with 100,000 stores, a fifth
          // less time per store.
          let ahead = index &+ 16
          if ahead < count { slots[ahead].element?.core.lane.touch() }
          slots[index].element?.core.dispatch(action)
          index &+= 1
        }
        return
      }
      // The number of this dispatch, taken by the first store that traces its actions.
      var number: UInt64 = 0
      while index < count {
        let ahead = index &+ 16
        if ahead < count { slots[ahead].element?.core.lane.touch() }
        slots[index].element?.core.dispatch(globally: action, number: &number)
        index &+= 1
      }
    }
  }

  /// Dispatches `action` to every store registered now; `completion` learns, once all are
  /// done, whether every one of them committed it.
  func dispatch(_ action: State.Action, completion: @escaping @Sendable (Bool) -> Void) {
    let cores = snapshot.compactMap { $0.element?.core }
    guard !cores.isEmpty else { return completion(false) }  // nothing was committed
    let group = CompletionGroup(count: cores.count, completion: completion)
    var number: UInt64 = 0
    for core in cores { core.dispatch(globally: action, number: &number) { group.complete($0) } }
  }

  func setShared(_ shared: [any SharedMiddleware]) -> [AnyObject] {
    // The cores go back to the caller too: a store freed meanwhile may have left this copy the
    // last reference to its core, which must not go while the caller holds its lock.
    let cores = snapshot.compactMap { $0.element?.core }
    return cores.flatMap { $0.setShared(shared) } + cores.map { $0 as AnyObject }
  }
}

/// Calls its completion once all of `count` parts are done, with whether all succeeded.
// `@unchecked Sendable`: its two variables are guarded by `lock`; the rest is constant.
private final class CompletionGroup: @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  private var remaining: Int
  // Guarded by `lock`.
  private var allSucceeded = true
  private let completion: @Sendable (Bool) -> Void

  init(count: Int, completion: @escaping @Sendable (Bool) -> Void) {
    remaining = count
    self.completion = completion
  }

  func complete(_ succeeded: Bool) {
    let result: Bool? = lock.withLock {
      remaining -= 1
      allSucceeded = allSucceeded && succeeded
      return remaining == 0 ? allSucceeded : nil
    }
    if let result { completion(result) }
  }
}

/// What learns about changes of the shared middleware list: a registry of one state type.
protocol SharedMiddlewareReceiver: AnyObject, Sendable {
  /// Gives every store the new list; returns the pipelines it replaced and the cores it walked,
  /// for the caller to release once it holds no lock (middleware may run user code in its
  /// deinit, and so may the mutations and executor of a core whose store was freed meanwhile).
  func setShared(_ shared: [any SharedMiddleware]) -> [AnyObject]
}

/// One ``StoreRegistry`` per state type, found in O(1) by the type's identity, and the shared
/// middleware list that every store gets.
///
/// Lock order: `Registries.lock`, then a registry's lock, then a store core's lock. No user
/// code runs under any of them: middleware and pipelines replaced under them are released
/// after.
@usableFromInline
enum Registries {
  private static let lock = Lock()
  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    /// The address of the table that readers look registries up in; 0 before the first.
    @usableFromInline
    static let table = Atomic<UInt>(0)
    // Guarded by `lock`: every table made, the current one last. None is ever freed: a reader
    // may still be looking in an old one.
    nonisolated(unsafe) private static var tables: [RegistryTable] = []
  #endif
  // Guarded by `lock`.
  nonisolated(unsafe) private static var registries: [ObjectIdentifier: any SharedMiddlewareReceiver] = [:]
  // Guarded by `lock`.
  nonisolated(unsafe) private static var shared = KeyedStorage<any SharedMiddleware>()

  /// The registry of `type`, without the process-wide lock once it exists: from the lock-free
  /// ``RegistryTable`` on Linux, from the calling thread's ``RegistryCache`` elsewhere (once the
  /// thread has looked it up before).
  ///
  /// `@inlinable`, with the lookup itself not generic: specialized in the caller, finding a
  /// registry involves no generic metadata.
  @inlinable
  static func registry<State: FluxCore.State>(for type: State.Type) -> Unmanaged<StoreRegistry<State>> {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      let address = table.load(ordering: .acquiring)
      if address != 0,
        let found = Unmanaged<RegistryTable>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
          ._withUnsafeGuaranteedRef({ $0.registry(for: UInt(bitPattern: ObjectIdentifier(type))) })
      {
        return Unmanaged<StoreRegistry<State>>.fromOpaque(found)
      }
    #else
      if let cached = RegistryCache.registry(for: ObjectIdentifier(type)) {
        return Unmanaged<StoreRegistry<State>>.fromOpaque(cached)
      }
    #endif
    return Unmanaged.passUnretained(lookUpAndCache(type))
  }

  /// Finds or makes the registry of `type` under the process-wide lock, and caches it for the
  /// calling thread where the table does not exist.
  @usableFromInline
  static func lookUpAndCache<State: FluxCore.State>(_ type: State.Type) -> StoreRegistry<State> {
    let registry = lock.withLock { registryLocked(for: type) }
    #if !(os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE)
      RegistryCache.current.remember(registry, for: ObjectIdentifier(type))
    #endif
    return registry
  }

  private static func registryLocked<State: FluxCore.State>(for type: State.Type) -> StoreRegistry<State> {
    let key = ObjectIdentifier(type)
    if let registry = registries[key] {
      return unsafeDowncast(registry, to: StoreRegistry<State>.self)
    }
    let registry = StoreRegistry<State>()
    registries[key] = registry
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      publishLocked(registry, for: key)
    #endif
    return registry
  }

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    /// Enters a new registry in the table, in a bigger copy of it if it is half full. Called with
    /// `lock` held.
    private static func publishLocked(_ registry: AnyObject, for type: ObjectIdentifier) {
      if tables.last?.hasRoom != true { tables.append(tables.last?.grown() ?? RegistryTable(bits: 4)) }
      let current = tables[tables.count - 1]
      current.insert(Unmanaged.passUnretained(registry).toOpaque(), for: UInt(bitPattern: type))
      // Publishes the table, and everything written into it above, to readers.
      table.store(UInt(bitPattern: Unmanaged.passUnretained(current).toOpaque()), ordering: .releasing)
    }
  #endif

  /// Registers `core` for global dispatch and builds its middleware pipeline around the shared
  /// middleware, atomically with respect to changes of that list.
  static func register<State: FluxCore.State>(_ core: StoreCore<State>) -> (StoreRegistry<State>, UInt64) {
    if core.isApart { return registerApart(core) }
    let (registry, key, released) = lock.withLock {
      let registry = registryLocked(for: State.self)
      let replaced = core.setShared(sharedList)
      let (key, retired) = registry.register(core)
      return (registry, key, (replaced, retired))
    }
    withExtendedLifetime(released) {}  // after every lock: may free the core of a freed store
    return (registry, key)
  }

  /// Gives `core` a pipeline without shared middleware, and a registry of its own, which no
  /// global dispatch looks in and no change of the shared list reaches.
  private static func registerApart<State: FluxCore.State>(_ core: StoreCore<State>) -> (StoreRegistry<State>, UInt64) {
    let replaced = core.setShared([])
    let registry = StoreRegistry<State>()
    let (key, retired) = registry.register(core)
    withExtendedLifetime((replaced, retired)) {}  // after every lock
    return (registry, key)
  }

  private static var sharedList: [any SharedMiddleware] {
    shared.slots.compactMap(\.element)
  }

  static func addShared(_ middleware: any SharedMiddleware) -> UInt64 {
    let (key, replaced) = lock.withLock {
      let key = shared.insert(middleware)
      return (key, broadcastLocked())
    }
    withExtendedLifetime(replaced) {}
    return key
  }

  static func removeShared(_ key: UInt64) {
    let (removed, replaced): ((any SharedMiddleware)?, [AnyObject]) = lock.withLock {
      guard let removed = shared.remove(key) else { return (nil, []) }
      shared.compactIfNeeded()
      return (removed, broadcastLocked())
    }
    // The middleware and the pipelines that held it go here, after every lock.
    withExtendedLifetime((removed, replaced)) {}
  }

  /// Gives every store the current list; returns the replaced pipelines. Called with `lock`
  /// held.
  private static func broadcastLocked() -> [AnyObject] {
    let list = sharedList
    return registries.values.flatMap { $0.setShared(list) }
  }
}
