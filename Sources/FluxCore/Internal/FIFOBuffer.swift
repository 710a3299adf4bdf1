/// A first-in, first-out queue over one growable array, for work that waits its turn.
///
/// Keeps its capacity when drained, so a steady flow of push and pop allocates nothing.
/// Not thread-safe: the owner guards it with its lock.
@usableFromInline
package struct FIFOBuffer<Element> {
  @usableFromInline
  var storage: ContiguousArray<Element?> = []
  @usableFromInline
  var head = 0

  /// Creates an empty queue.
  @inlinable
  package init() {}

  /// The number of waiting elements.
  package var count: Int { storage.count - head }

  /// Adds `element` at the back.
  @inlinable
  package mutating func append(_ element: Element) {
    storage.append(element)
  }

  /// Removes and returns the front element, or `nil` when empty.
  ///
  /// Inlinable, so that the common empty case costs a comparison in the owner's code; a
  /// call to the generic function would first look up this type's metadata.
  @inlinable
  package mutating func popFirst() -> Element? {
    if head == storage.count { return nil }
    return removeFirst()
  }

  /// Removes and returns the front element; the queue is not empty.
  @usableFromInline
  mutating func removeFirst() -> Element? {
    let element = storage[head].take()
    head += 1
    if head == storage.count {
      storage.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 64, head >= storage.count - head {
      storage.removeFirst(head)
      head = 0
    }
    return element
  }

  /// Removes every element and returns them in order.
  package mutating func removeAll() -> [Element] {
    var elements: [Element] = []
    elements.reserveCapacity(count)
    while let element = popFirst() { elements.append(element) }
    storage = []
    return elements
  }
}

extension FIFOBuffer: Sendable where Element: Sendable {}
