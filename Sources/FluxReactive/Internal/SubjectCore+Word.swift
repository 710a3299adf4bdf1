import FluxCore

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Glibc
  import Synchronization
#endif

// A variable whose value is one word or less and holds no references (an `Int`, a `Bool`, a
// `Double`, a small enum) keeps a copy of its bits in an atomic word, on Linux, so that reading
// it takes no lock and a change takes one lock (`lock`, the delivery turn) instead of two.
//
// Why a reader always gets a whole, current value without a lock: every change of `current`
// happens with `lock` held and is followed, still under `lock`, by a release store of its bits
// in `word`; a reader's acquire load of `word` sees the bits of some change, whole (one atomic
// word), and a value that holds no references is nothing but its bits. A change that has
// returned stored its bits before returning, so a read that starts after it sees them or later
// ones. A reader never waits: not for a delivery, not even for a `modify` body on another thread
// (it reads the value from before that body). A read from inside this thread's own `modify` body
// is found through `modifyingThread`, which only the body's thread sets to its own id.

extension SubjectCore {
  /// Whether this value lives in an atomic word too, read without a lock: only on Linux, where
  /// `Synchronization` is always available, for a value of at most 8 bytes with no references.
  /// A constant once specialized.
  @inlinable
  static var usesWord: Bool {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      _isPOD(Value.self) && MemoryLayout<Value>.size <= MemoryLayout<UInt64>.size
    #else
      false
    #endif
  }

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    /// The bits of `value`, which ``usesWord`` says fit one word.
    @inlinable
    static func bits(of value: Value) -> UInt64 {
      var bits: UInt64 = 0
      withUnsafeMutableBytes(of: &bits) { bits in
        withUnsafeBytes(of: value) { bits.copyMemory(from: $0) }
      }
      return bits
    }

    /// The value whose bits are `bits`.
    @inlinable
    static func value(fromBits bits: UInt64) -> Value {
      withUnsafeBytes(of: bits) { $0.baseAddress.unsafelyUnwrapped.loadUnaligned(as: Value.self) }
    }

    /// The calling thread's id, as `modifyingThread` holds it (never 0).
    @inlinable
    static var currentThread: UInt { UInt(pthread_self()) }

    /// `value`, for a value in a word: one atomic load; when `tracked`, a read for Observation too.
    @inlinable
    func wordValue(tracked: Bool) -> Value {
      if _slowPath(modifyingThread.load(ordering: .relaxed) == Self.currentThread) { Self.reentrantModify() }
      if tracked { valueWasRead() }
      return Self.value(fromBits: word.load(ordering: .acquiring))
    }

    /// `set`, for a value in a word: `lock` only. There is no old value to release.
    @inlinable
    func wordSet(_ value: Value) {
      lock.lock()
      if _slowPath(current == nil) { Self.reentrantModify() }  // inside this thread's `modify` body
      let isObserved = isObserved
      if _slowPath(isObserved) { valueWillChange() }  // Observation's trackers, before the change
      current = value
      word.store(Self.bits(of: value), ordering: .releasing)
      if _slowPath(isObserved) { valueDidChange() }
      let taken = sendLocked(value)
      lock.unlock(releasing: taken)
    }
  #endif
}
