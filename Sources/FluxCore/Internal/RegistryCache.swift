#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Bionic)
  import Bionic
#endif

// Where `RegistryTable` exists (Linux), it replaces this cache.
#if !(os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE)

  /// One thread's memory of the registries it has looked up, so that `Store<S>.actions` takes no
  /// process-wide lock once the thread has met `S`: a global dispatch of one state type never
  /// waits for code that registers stores, or dispatches, of another.
  ///
  /// A registry, once made, lives as long as the process and never changes its identity
  /// (``Registries`` keeps every one), so a cached entry can never be stale, and the cache can
  /// hold it by an unretained pointer: using it costs no reference count. The cache is freed with
  /// its thread. Only its own thread touches it, through a `pthread` key, so it needs no lock.
  ///
  /// Its properties opt out of the dynamic exclusivity check: only the owning thread reaches
  /// them, one call at a time, and no call reenters.
  @usableFromInline
  final class RegistryCache {
    /// The state types met so far, and their registries at the same positions. A handful per
    /// thread in practice: a linear scan beats hashing the key.
    @exclusivity(unchecked) private var types: ContiguousArray<ObjectIdentifier> = []
    @exclusivity(unchecked) private var registries: ContiguousArray<UnsafeMutableRawPointer> = []
    /// Where the last lookup found its type: the next global dispatch is most likely the same.
    @exclusivity(unchecked) private var lastHit = 0

    /// The registry the calling thread has cached for `type`, if any.
    @usableFromInline
    static func registry(for type: ObjectIdentifier) -> UnsafeMutableRawPointer? {
      guard let existing = pthread_getspecific(key) else { return nil }
      // The thread's key keeps the cache alive for as long as the thread runs.
      return Unmanaged<RegistryCache>.fromOpaque(existing)._withUnsafeGuaranteedRef { $0.registry(for: type) }
    }

    /// The registry cached for `type`, if any.
    func registry(for type: ObjectIdentifier) -> UnsafeMutableRawPointer? {
      if lastHit < types.count, types[lastHit] == type { return registries[lastHit] }
      guard let index = types.firstIndex(of: type) else { return nil }
      lastHit = index
      return registries[index]
    }

    /// Remembers `registry` as the registry of `type`.
    func remember(_ registry: AnyObject, for type: ObjectIdentifier) {
      types.append(type)
      registries.append(Unmanaged.passUnretained(registry).toOpaque())
      lastHit = types.count - 1
    }

    /// The calling thread's cache, made on its first use and freed when the thread exits.
    static var current: RegistryCache {
      if let existing = pthread_getspecific(key) {
        return Unmanaged<RegistryCache>.fromOpaque(existing).takeUnretainedValue()
      }
      let cache = RegistryCache()
      let status = pthread_setspecific(key, Unmanaged.passRetained(cache).toOpaque())
      guard status == 0 else { fatalError("Flux: pthread_setspecific failed with status \(status).") }
      return cache
    }

    /// The key of each thread's cache; its destructor releases the cache when the thread exits.
    private static let key: pthread_key_t = {
      var key = pthread_key_t()
      let status = pthread_key_create(&key) { cache in
        #if canImport(Darwin)
          Unmanaged<RegistryCache>.fromOpaque(cache).release()
        #else
          if let cache { Unmanaged<RegistryCache>.fromOpaque(cache).release() }
        #endif
      }
      guard status == 0 else { fatalError("Flux: pthread_key_create failed with status \(status).") }
      return key
    }()
  }

#endif
