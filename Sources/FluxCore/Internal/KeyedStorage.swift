/// Elements kept in insertion order under increasing keys, with O(log n) removal by key.
///
/// Removal leaves a hole (the slot's element becomes `nil`), so the keys of the other elements
/// and the order of iteration never change while someone walks a snapshot of ``slots``. Holes
/// are squeezed out by ``compactIfNeeded()`` once they outnumber the live elements, which keeps
/// removal O(1) amortised on top of the binary search.
///
/// Not thread-safe: the owner guards it with its lock.
package struct KeyedStorage<Element> {
  /// One element and the key it was inserted under.
  package struct Slot {
    /// The key returned by ``KeyedStorage/insert(_:)``; slots are sorted by it.
    package let key: UInt64
    /// The element, or `nil` once removed.
    package var element: Element?
  }

  /// The slots in insertion order, holes included. Copying it is O(1) (copy on write).
  package private(set) var slots: ContiguousArray<Slot> = []
  /// The key the next insertion receives; every present key is smaller.
  package private(set) var nextKey: UInt64 = 0
  /// The number of slots that hold an element.
  package private(set) var count = 0
  /// Increases on every removal, so a walker of a snapshot can tell that it must look again.
  package private(set) var removals: UInt64 = 0

  /// Creates empty storage.
  package init() {}

  /// Whether no element is stored.
  package var isEmpty: Bool { count == 0 }

  /// Appends `element` and returns its key.
  package mutating func insert(_ element: Element) -> UInt64 {
    let key = nextKey
    nextKey &+= 1
    slots.append(Slot(key: key, element: element))
    count += 1
    return key
  }

  /// The index of the slot with `key` that still holds an element, if any.
  @inline(__always)
  private func index(of key: UInt64) -> Int? {
    var low = 0
    var high = slots.count
    while low < high {
      let middle = (low &+ high) >> 1
      if slots[middle].key < key { low = middle &+ 1 } else { high = middle }
    }
    guard low < slots.count, slots[low].key == key, slots[low].element != nil else { return nil }
    return low
  }

  /// Whether an element is stored under `key`.
  package func contains(_ key: UInt64) -> Bool {
    index(of: key) != nil
  }

  /// Removes and returns the element stored under `key`, or `nil` if there is none.
  ///
  /// The caller should release the returned element after leaving its lock: its deinit may
  /// run arbitrary code.
  package mutating func remove(_ key: UInt64) -> Element? {
    guard let index = index(of: key) else { return nil }
    let element = slots[index].element
    slots[index].element = nil
    count -= 1
    removals &+= 1
    return element
  }

  /// Removes every element and returns them, for release outside the caller's lock.
  package mutating func removeAll() -> ContiguousArray<Slot> {
    let removed = slots
    slots = []
    if count > 0 { removals &+= 1 }
    count = 0
    return removed
  }

  /// Squeezes out the holes when they outnumber the elements (amortised O(1) per removal).
  package mutating func compactIfNeeded() {
    let holes = slots.count - count
    guard holes > 16, holes > count else { return }
    if count == 0 {
      slots.removeAll(keepingCapacity: false)
      return
    }
    var kept = ContiguousArray<Slot>()
    kept.reserveCapacity(count)
    for slot in slots where slot.element != nil {
      kept.append(slot)
    }
    slots = kept
  }
}

extension KeyedStorage: Sendable where Element: Sendable {}
extension KeyedStorage.Slot: Sendable where Element: Sendable {}
