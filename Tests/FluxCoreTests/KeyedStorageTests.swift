import Testing

@testable import FluxCore

@Suite("KeyedStorage")
struct KeyedStorageTests {
  @Test("keys increase in insertion order; removal finds by key")
  func insertAndRemove() {
    var storage = KeyedStorage<String>()
    let keys = ["a", "b", "c"].map { storage.insert($0) }
    #expect(keys == [0, 1, 2])
    #expect(storage.remove(1) == "b")
    #expect(storage.remove(1) == nil, "a second removal finds nothing")
    #expect(storage.contains(0) && !storage.contains(1) && storage.contains(2))
    #expect(storage.slots.compactMap(\.element) == ["a", "c"])
    #expect(storage.count == 2)
  }

  @Test("removing from the middle leaves a hole: no other slot moves")
  func middleRemovalLeavesHole() {
    var storage = KeyedStorage<Int>()
    for value in 0..<4 { _ = storage.insert(value) }
    _ = storage.remove(1)
    #expect(storage.slots.map(\.key) == [0, 1, 2, 3])
    #expect(storage.slots.map(\.element) == [0, nil, 2, 3])
  }

  @Test("removing the newest drops its slot and the holes before it")
  func newestRemovalDropsTrailingHoles() {
    var storage = KeyedStorage<Int>()
    for value in 0..<4 { _ = storage.insert(value) }
    _ = storage.remove(2)
    _ = storage.remove(1)
    _ = storage.remove(3)
    #expect(storage.slots.map(\.key) == [0])
    #expect(storage.insert(4) == 4, "keys are never reused")
    #expect(storage.slots.map(\.key) == [0, 4])
  }

  @Test("churn at the end allocates no new storage and leaves no holes")
  func churnAtTheEnd() {
    var storage = KeyedStorage<Int>()
    for value in 0..<100 { _ = storage.insert(value) }
    for value in 0..<1_000 {
      let key = storage.insert(value)
      _ = storage.remove(key)
    }
    #expect(storage.slots.count == 100)
    #expect(storage.count == 100)
  }

  @Test("compaction squeezes out holes in place, keeping order and keys")
  func compaction() {
    var storage = KeyedStorage<Int>()
    for value in 0..<100 { _ = storage.insert(value) }
    for key in stride(from: 0, to: 99, by: 1) where key % 10 != 0 { _ = storage.remove(UInt64(key)) }
    storage.compactIfNeeded()
    #expect(storage.slots.map(\.key) == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 99])
    #expect(storage.slots.allSatisfy { $0.element != nil })
    #expect(storage.contains(50) && !storage.contains(51))
  }

  @Test("a snapshot of the slots is unaffected by later removals and compaction")
  func snapshotIsStable() {
    var storage = KeyedStorage<Int>()
    for value in 0..<40 { _ = storage.insert(value) }
    let snapshot = storage.slots
    for key in 0..<39 { _ = storage.remove(UInt64(key)) }
    storage.compactIfNeeded()
    #expect(snapshot.compactMap(\.element) == Array(0..<40))
    #expect(storage.slots.compactMap(\.element) == [39])
  }
}
