/// Elements kept in insertion order under increasing keys, with O(log n) removal by key.
///
/// Removal leaves a hole (the slot's element becomes `nil`), so the keys and positions of the
/// other elements never change while someone walks the slots, a snapshot of ``slots`` or the
/// live storage by index. Removing the newest element drops its slot (and any holes before it)
/// instead, which moves nothing either. Holes are squeezed out, in place, by
/// ``compactIfNeeded()`` once they outnumber the live elements, which keeps removal O(1)
/// amortised on top of the binary search; the owner calls it only when nobody walks the live
/// storage.
///
/// The hot paths are `@inlinable`, so that a client's specialization (`Sink<Int>.send`, say)
/// reaches them without generic metadata lookups.
///
/// Not thread-safe: the owner guards it with its lock.
@usableFromInline
package struct KeyedStorage<Element> {
  /// One element and the key it was inserted under.
  @usableFromInline
  package struct Slot {
    /// The key returned by ``KeyedStorage/insert(_:)``; slots are sorted by it.
    @usableFromInline
    package let key: UInt64
    /// The element, or `nil` once removed.
    @usableFromInline
    package var element: Element?

    @inlinable
    init(key: UInt64, element: Element?) {
      self.key = key
      self.element = element
    }
  }

  /// The slots in insertion order, holes included. Copying it is O(1) (copy on write).
  @usableFromInline
  package internal(set) var slots: ContiguousArray<Slot> = []
  /// The key the next insertion receives; every present key is smaller.
  @usableFromInline
  package internal(set) var nextKey: UInt64 = 0
  /// The number of slots that hold an element.
  @usableFromInline
  package internal(set) var count = 0

  /// Creates empty storage.
  @inlinable
  package init() {}

  /// Whether no element is stored.
  @inlinable
  package var isEmpty: Bool { count == 0 }

  /// Appends `element` and returns its key.
  @inlinable
  package mutating func insert(_ element: Element) -> UInt64 {
    let key = nextKey
    nextKey &+= 1
    slots.append(Slot(key: key, element: element))
    count &+= 1
    return key
  }

  /// The index of the slot with `key` that still holds an element, if any.
  @inlinable
  func index(of key: UInt64) -> Int? {
    let index = Self.lowerBound(of: key, in: slots)
    return holds(key, at: index) ? index : nil
  }

  /// The index of the first of `slots` whose key is `key` or more (binary search: the keys of
  /// slots only ever increase).
  @inlinable
  package static func lowerBound(of key: UInt64, in slots: ContiguousArray<Slot>) -> Int {
    slots.withUnsafeBufferPointer { slots in
      var low = 0
      var high = slots.count
      while low < high {
        let middle = (low &+ high) >> 1
        if slots[middle].key < key { low = middle &+ 1 } else { high = middle }
      }
      return low
    }
  }

  /// Whether the slot at `index` is still there, under `key`, and holds an element: true for
  /// an element present at the position a walk found it, however the slots changed since.
  @inlinable
  package func holds(_ key: UInt64, at index: Int) -> Bool {
    slots.withUnsafeBufferPointer { slots in
      guard index < slots.count, slots[index].key == key else { return false }
      if case .none = slots[index].element { return false }
      return true
    }
  }

  /// Whether an element is stored under `key`.
  @inlinable
  package func contains(_ key: UInt64) -> Bool {
    index(of: key) != nil
  }

  /// Removes and returns the element stored under `key`, or `nil` if there is none.
  ///
  /// The caller should release the returned element after leaving its lock: its deinit may
  /// run arbitrary code.
  @inlinable
  package mutating func remove(_ key: UInt64) -> Element? {
    guard let index = index(of: key) else { return nil }
    let element = slots[index].element.take()
    count &-= 1
    if index == slots.count &- 1 {
      // The newest slot goes, with the holes right before it: nothing else moves.
      repeat {
        slots.removeLast()
      } while !slots.isEmpty && slots[slots.count &- 1].element == nil
    }
    return element
  }

  /// Removes every element and returns them, for release outside the caller's lock.
  package mutating func removeAll() -> ContiguousArray<Slot> {
    let removed = slots
    slots = []
    count = 0
    return removed
  }

  /// Squeezes out the holes, in place, when they outnumber the elements (amortised O(1) per
  /// removal).
  @inlinable
  package mutating func compactIfNeeded() {
    let holes = slots.count &- count
    guard holes > 16, holes > count else { return }
    compact()
  }

  @usableFromInline
  mutating func compact() {
    if count == 0 {
      slots.removeAll(keepingCapacity: false)
    } else {
      slots.removeAll { $0.element == nil }
    }
  }
}

extension KeyedStorage: Sendable where Element: Sendable {}
extension KeyedStorage.Slot: Sendable where Element: Sendable {}
