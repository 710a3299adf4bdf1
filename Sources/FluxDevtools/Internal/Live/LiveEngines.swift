import FluxCore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Every ``LiveEngine`` of the process, for `fork`: a child starts with only the thread that
/// forked, so an engine's lock held by another thread at that moment would never be given back
/// there, and the first commit of the child would wait for it for ever.
///
/// Around a fork, the engines' locks are taken (after this registry's own, always in that order;
/// nothing takes the registry's lock while it holds an engine's), so that no other thread is
/// inside one; the parent gives them back; the child closes its copy of each engine (it has no
/// connection thread, and the socket and the pipe are the parent's), then gives them back.
// `@unchecked Sendable`: `engines` is guarded by `lock`.
final class LiveEngines: @unchecked Sendable {
  static let shared: LiveEngines = {
    let engines = LiveEngines()
    // Registered once, with the instance made: no handler runs before `shared` exists.
    let status = pthread_atfork(
      { LiveEngines.shared.prepareFork() },
      { LiveEngines.shared.endFork(inChild: false) },
      { LiveEngines.shared.endFork(inChild: true) })
    guard status == 0 else { fatalError("Flux: pthread_atfork failed with status \(status).") }
    return engines
  }()

  private let lock = Lock()
  /// Not retained: an engine leaves in its `deinit`, which waits for a fork under way, so an
  /// engine is never used here after it is gone.
  private var engines: [ObjectIdentifier: Unmanaged<LiveEngine>] = [:]

  func add(_ engine: LiveEngine) {
    lock.withLock { engines[ObjectIdentifier(engine)] = .passUnretained(engine) }
  }

  func remove(_ engine: LiveEngine) {
    lock.withLock { _ = engines.removeValue(forKey: ObjectIdentifier(engine)) }
  }

  private func prepareFork() {
    lock.lock()
    for engine in engines.values { engine._withUnsafeGuaranteedRef { $0.lockForFork() } }
  }

  private func endFork(inChild: Bool) {
    for engine in engines.values { engine._withUnsafeGuaranteedRef { $0.unlockAfterFork(inChild: inChild) } }
    lock.unlock()
  }
}
