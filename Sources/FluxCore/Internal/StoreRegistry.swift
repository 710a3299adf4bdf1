/// The live stores of one state type, for global dispatch.
///
/// Holds each store's core, never the store: a store unregisters when freed, and its core then
/// refuses every action and has dropped its state. A global dispatch walks a
/// snapshot taken under the lock (copy on write, no allocation) and hands the action to each
/// store whose core is still there; a store registered after the snapshot does not receive it,
/// a store freed meanwhile receives all of it or none.
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

  /// The registry of `State`, created on first use.
  @inlinable
  static var shared: Unmanaged<StoreRegistry<State>> {
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
    withExtendedLifetime(removed) {}  // released after the lock
  }

  /// The cores registered now.
  @inlinable
  var snapshot: ContiguousArray<KeyedStorage<Entry>.Slot> {
    lock.lock()
    defer { lock.unlock() }
    return stores.slots
  }

  /// Dispatches `action` to every store registered now.
  @inlinable
  func dispatch(_ action: State.Action) {
    // A local copy keeps every core alive for the walk, so each is borrowed from it (optional
    // chaining reads the element in place), not retained and released.
    let slots = snapshot
    var index = 0
    while index < slots.count {
      slots[index].element?.core.dispatch(action)
      index &+= 1
    }
  }

  /// Dispatches `action` to every store registered now; `completion` learns, once all are
  /// done, whether every one of them committed it.
  func dispatch(_ action: State.Action, completion: @escaping @Sendable (Bool) -> Void) {
    let cores = snapshot.compactMap { $0.element?.core }
    guard !cores.isEmpty else { return completion(false) }  // nothing was committed
    let group = CompletionGroup(count: cores.count, completion: completion)
    for core in cores { core.dispatch(action) { group.complete($0) } }
  }

  func setShared(_ shared: [any SharedMiddleware]) -> [AnyObject] {
    snapshot.flatMap { $0.element?.core.setShared(shared) ?? [] }
  }
}

/// Calls its completion once all of `count` parts are done, with whether all succeeded.
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
  /// Gives every store the new list; returns the pipelines it replaced, for the caller to
  /// release once it holds no lock (their middleware may run user code in its deinit).
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
  // Guarded by `lock`.
  nonisolated(unsafe) private static var registries: [ObjectIdentifier: any SharedMiddlewareReceiver] = [:]
  // Guarded by `lock`.
  nonisolated(unsafe) private static var shared = KeyedStorage<any SharedMiddleware>()

  /// The registry of `type`: from the calling thread's cache, so without the process-wide lock,
  /// once the thread has looked it up before.
  ///
  /// `@inlinable`, with the lookup itself not generic: specialized in the caller, finding a
  /// cached registry involves no generic metadata.
  @inlinable
  static func registry<State: FluxCore.State>(for type: State.Type) -> Unmanaged<StoreRegistry<State>> {
    if let cached = RegistryCache.registry(for: ObjectIdentifier(type)) {
      return Unmanaged<StoreRegistry<State>>.fromOpaque(cached)
    }
    return Unmanaged.passUnretained(lookUpAndCache(type))
  }

  /// Finds or makes the registry of `type` under the process-wide lock, and caches it for the
  /// calling thread.
  @usableFromInline
  static func lookUpAndCache<State: FluxCore.State>(_ type: State.Type) -> StoreRegistry<State> {
    let registry = lock.withLock { registryLocked(for: type) }
    RegistryCache.current.remember(registry, for: ObjectIdentifier(type))
    return registry
  }

  private static func registryLocked<State: FluxCore.State>(for type: State.Type) -> StoreRegistry<State> {
    let key = ObjectIdentifier(type)
    if let registry = registries[key] {
      return unsafeDowncast(registry, to: StoreRegistry<State>.self)
    }
    let registry = StoreRegistry<State>()
    registries[key] = registry
    return registry
  }

  /// Registers `core` for global dispatch and builds its middleware pipeline around the shared
  /// middleware, atomically with respect to changes of that list.
  static func register<State: FluxCore.State>(_ core: StoreCore<State>) -> (StoreRegistry<State>, UInt64) {
    let (registry, key, replaced) = lock.withLock {
      let registry = registryLocked(for: State.self)
      let replaced = core.setShared(sharedList)
      return (registry, registry.register(core), replaced)
    }
    withExtendedLifetime(replaced) {}
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
