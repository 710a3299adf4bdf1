#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

/// The elements of a registry, published for readers that walk them without its lock: a global
/// dispatch reads the stores of its type with two atomic additions and no lock, no reference
/// count, no allocation.
///
/// The owner keeps the elements (under its `lock`) and tells the cell before every change
/// (``invalidate()``). The first reader after a change builds an immutable ``Box`` of them,
/// under the lock, and publishes it; every later reader walks that box, until the next change
/// unpublishes it.
///
/// **Reclamation.** A reader counts itself in ``readers`` before it loads the box and out after
/// its walk; it holds no reference. An unpublished box is freed only once ``readers`` has been
/// seen at zero *after* it was unpublished. That is enough: a reader that loaded the box did so
/// before the box was unpublished, and counted itself in before that, so a zero seen after the
/// unpublishing means it has counted itself out. (Every operation on `readers`, `current` and
/// `hasRetired` is sequentially consistent: the proof uses their single total order. On x86-64
/// that costs the readers nothing beyond the two locked additions.)
///
/// Unpublished boxes wait in ``retired`` while readers run. Whoever then sees zero readers frees
/// them: the owner when it next unpublishes a box, or the last reader out, which finds
/// ``hasRetired`` set.
/// The two checks form a Dekker pair (the owner sets `hasRetired`, then reads `readers`; a
/// reader decrements `readers`, then reads `hasRetired`), so at least one of them sees the
/// other and no box is left behind once readers stop. While some reader is always in (global
/// dispatches overlapping forever on several threads), retired boxes wait.
///
/// The box of the moment shares its storage with the owner's elements (copy on write): freeing
/// it drops that storage's count only, never an element, so the owner may free it under its
/// lock, and its next change then happens in place. A retired box may hold the last reference
/// to an element the owner has removed since, so retired boxes are freed after the lock.
///
/// Only on Linux, where `Synchronization` is always there. On Apple systems (`Atomic` needs
/// macOS 15) a reader copies the elements under the lock, one reference count.
///
/// Not `Sendable` itself: its owner shares it between threads, and is safe to because of the
/// above (``retired`` is guarded by the owner's lock; everything else is atomic or immutable).
@usableFromInline
final class SnapshotCell<Elements> {
  /// An immutable copy of the elements.
  @usableFromInline
  final class Box {
    @usableFromInline
    let elements: Elements

    init(_ elements: Elements) {
      self.elements = elements
    }
  }

  /// The owner's lock, which guards its elements and, here, ``retired``.
  @usableFromInline
  let lock: Lock

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    /// The readers between their count in and their count out.
    @usableFromInline
    let readers = Atomic<Int>(0)
    /// The published box, retained by the cell, as its address; 0 while none is.
    @usableFromInline
    let current = Atomic<UInt>(0)
    /// Whether ``retired`` holds a box.
    @usableFromInline
    let hasRetired = Atomic<Bool>(false)
    /// Unpublished boxes that a reader may still walk. Guarded by `lock`.
    private var retired: [Box] = []
  #endif

  /// A cell whose owner guards its elements with `lock`.
  init(lock: Lock) {
    self.lock = lock
  }

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    deinit {
      let bits = current.load(ordering: .relaxed)
      if bits != 0 { Self.box(bits).release() }
    }

    /// Calls `body` with the elements as published now, or as `elements` (called with `lock`
    /// held) returns them if nothing is published. `body` may run any code, including code that
    /// reads or changes the owner again.
    @inlinable
    func read<Result>(orPublish elements: @autoclosure () -> Elements, _ body: (Elements) -> Result) -> Result {
      readers.wrappingAdd(1, ordering: .sequentiallyConsistent)
      defer { leave() }
      var bits = current.load(ordering: .sequentiallyConsistent)
      if bits == 0 { bits = publish(elements()) }
      // Counted in, so the box stays until this walk ends: borrowed, not retained.
      return Self.box(bits)._withUnsafeGuaranteedRef { body($0.elements) }
    }

    /// Counts the caller out, and frees the retired boxes if it was the last reader.
    @inlinable
    func leave() {
      let remaining = readers.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue
      if remaining == 0 && hasRetired.load(ordering: .sequentiallyConsistent) { reclaim() }
    }

    /// Publishes the owner's elements now, unless another reader just did; returns the box.
    @usableFromInline
    func publish(_ elements: @autoclosure () -> Elements) -> UInt {
      lock.withLock {
        let bits = current.load(ordering: .sequentiallyConsistent)
        if bits != 0 { return bits }
        let box = UInt(bitPattern: Unmanaged.passRetained(Box(elements())).toOpaque())
        current.store(box, ordering: .sequentiallyConsistent)
        return box
      }
    }

    /// Frees the retired boxes if no reader is in.
    @usableFromInline
    func reclaim() {
      let boxes = lock.withLock { readers.load(ordering: .sequentiallyConsistent) == 0 ? takeRetired() : [] }
      withExtendedLifetime(boxes) {}  // freed after the lock: a box may hold an element's last reference
    }

    /// Unpublishes the box of the moment, before the owner changes its elements. Called with
    /// `lock` held; returns the retired boxes that can go, for the caller to release after it.
    func invalidate() -> [Box] {
      let bits = current.exchange(0, ordering: .sequentiallyConsistent)
      guard bits != 0 else { return [] }
      hasRetired.store(true, ordering: .sequentiallyConsistent)
      guard readers.load(ordering: .sequentiallyConsistent) == 0 else {
        retired.append(Self.box(bits).takeRetainedValue())
        return []
      }
      // No reader: the box just unpublished shares the owner's storage, so freeing it here
      // frees no element, and the owner's change happens in place.
      Self.box(bits).release()
      return takeRetired()
    }

    /// Empties ``retired``, with `lock` held and no reader in.
    private func takeRetired() -> [Box] {
      hasRetired.store(false, ordering: .sequentiallyConsistent)
      defer { retired = [] }
      return retired
    }

    @inlinable
    static func box(_ bits: UInt) -> Unmanaged<Box> {
      Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
    }
  #else
    /// Calls `body` with the elements as `elements`, called with `lock` held, returns them.
    @inlinable
    func read<Result>(orPublish elements: @autoclosure () -> Elements, _ body: (Elements) -> Result) -> Result {
      lock.lock()
      let copy = elements()
      lock.unlock()
      return body(copy)
    }

    /// Nothing is published, so nothing is retired.
    func invalidate() -> [Box] { [] }
  #endif
}
