/// Which of Flux's two code paths this build compiled.
///
/// On Linux, where `Synchronization` is always there, Flux takes lock-free paths: the fast lane
/// of an idle store (``FastLane``), the registry table (``RegistryTable``), published snapshots
/// for global dispatch (``SnapshotCell``), and a variable's value in an atomic word. Apple
/// platforms, whose minimums predate `Atomic` (macOS 15), compile the lock-based fallbacks
/// instead: every dispatch through the store's lock, a per-thread ``RegistryCache``, snapshots
/// copied under the registry's lock, values behind the value lock.
///
/// The compilation condition `FLUX_PORTABLE` (`swift build -Xswiftc -DFLUX_PORTABLE`) makes a
/// Linux build take the Apple path, so that the whole test suite runs on it here. The lock stays
/// `pthread_mutex_t` there: `os_unfair_lock` exists only on Darwin.
package enum CodePath {
  /// Whether this build takes Linux's lock-free paths; `false` on Apple platforms and under
  /// `FLUX_PORTABLE`.
  package static var usesAtomics: Bool {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      true
    #else
      false
    #endif
  }

  /// Whether this build was asked for the Apple code path with `-DFLUX_PORTABLE`.
  package static var isPortable: Bool {
    #if FLUX_PORTABLE
      true
    #else
      false
    #endif
  }
}
