import Dispatch
import Foundation
import Testing

@testable import FluxCore

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

/// The snapshots that global dispatches walk without the registry's lock, and the table they
/// find registries in. CI runs this suite under the address sanitizer with leak detection, and
/// under the thread sanitizer.
@Suite("Snapshot cell and registry table")
struct SnapshotCellTests {
  /// Counts its live instances.
  final class Tracked: Sendable {
    let id: Int
    let live: Counter

    init(_ id: Int, live: Counter) {
      self.id = id
      self.live = live
      live.increment()
    }

    deinit { live.decrement() }
  }

  /// An owner of the kind the cell serves: elements under a lock, and the cell told before each
  /// change of them.
  final class Owner: @unchecked Sendable {
    let lock = Lock()
    // Guarded by `lock`.
    private var elements: ContiguousArray<Tracked> = []
    let cell: SnapshotCell<ContiguousArray<Tracked>>

    init() {
      cell = SnapshotCell(lock: lock)
    }

    func change(_ body: (inout ContiguousArray<Tracked>) -> Void) {
      let retired = lock.withLock {
        let retired = cell.invalidate()
        body(&elements)
        return retired
      }
      withExtendedLifetime(retired) {}
    }

    func read<Result>(_ body: (ContiguousArray<Tracked>) -> Result) -> Result {
      cell.read(orPublish: elements, body)
    }
  }

  @Test("A change during a walk leaves what it removed to the walk, which frees it as it ends")
  func changeDuringWalk() {
    let live = Counter()
    let owner = Owner()
    owner.change { $0.append(Tracked(1, live: live)) }
    let walking = DispatchSemaphore(value: 0)
    let changed = DispatchSemaphore(value: 0)
    let seen = Recorder<Int>()
    let reader = Thread {
      owner.read { elements in
        walking.signal()
        changed.wait()
        for element in elements { seen.append(element.id) }
      }
      seen.append(live.value)
    }
    reader.start()
    walking.wait()
    owner.change { $0.removeAll() }
    #expect(live.value == 1, "freed under a walk")
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      // The walk borrows the snapshot, holding no reference of its own: it must be kept.
      let kept = owner.cell.hasRetired.load(ordering: .relaxed)
      #expect(kept, "the snapshot under the walk was freed")
    #endif
    changed.signal()
    #expect(waitUntil { seen.values.count == 2 })
    #expect(seen.values == [1, 0], "the walk saw its element, and its end freed it")
    owner.read { #expect($0.isEmpty) }
  }

  @Test("With no walk running, a change frees what it removed at once")
  func changeWithoutWalk() {
    let live = Counter()
    let owner = Owner()
    owner.change { $0.append(Tracked(1, live: live)) }
    owner.read { #expect($0.map(\.id) == [1]) }  // published
    owner.change { $0.removeAll() }
    #expect(live.value == 0)
  }

  @Test("A walk sees the elements as of its start, reentrant walks and changes included")
  func reentrantWalksAndChanges() {
    let live = Counter()
    let owner = Owner()
    owner.change { $0.append(Tracked(1, live: live)) }
    owner.read { outer in
      owner.change { $0.append(Tracked(2, live: live)) }
      owner.read { inner in
        #expect(inner.map(\.id) == [1, 2])
        owner.change { $0.removeFirst() }
      }
      #expect(outer.map(\.id) == [1])
      #expect(live.value == 2, "freed under a walk")
    }
    #expect(live.value == 1)
    owner.read { #expect($0.map(\.id) == [2]) }
  }

  @Test(
    "Walks and changes on several threads, changes and walks inside walks too: every walk sees live elements, none is left behind"
  )
  func walksAndChangesRace() {
    let live = Counter()
    let owner = Owner()
    let walks = Counter()
    @Sendable func change(_ index: Int) {
      owner.change { elements in
        elements.append(Tracked(index, live: live))
        if elements.count > 8 { elements.removeFirst() }
      }
    }
    race(threads: 4, iterations: 3_000) { thread, index in
      if thread == 0 {
        change(index)
      } else {
        let seen = owner.read { elements in
          // Like a commit that makes a store, or dispatches globally, during a global dispatch.
          if thread == 1 && index.isMultiple(of: 3) { change(-index) }
          if thread == 2 && index.isMultiple(of: 5) { _ = owner.read { $0.count } }
          // Reads every element: a freed one is a use after free, which the sanitizers catch.
          return elements.allSatisfy { $0.live === live } ? elements.count : -1
        }
        if (0...8).contains(seen) { walks.increment() }
      }
    }
    #expect(walks.value == 9_000)
    // Every walk has ended: every retired snapshot must be gone, so only the owner's remain.
    #expect(live.value == 8)
    owner.change { $0.removeAll() }
    #expect(live.value == 0)
  }

  enum Freed {}

  @Test("inv8, inv15: a store freed during a global dispatch that walks it has its core freed when the dispatch ends")
  func inv8_inv15_storeFreedDuringGlobalDispatch() {
    let victim = Box<Store<LogState<Freed>>?>(nil)
    weak var victimCore: StoreCore<LogState<Freed>>?
    let first = LogState<Freed>()
    let store = Store(state: first, mutations: .init(), executor: .immediate)
    let second = LogState<Freed>()
    victim.value = Store(state: second, mutations: .init(), executor: .immediate)
    victimCore = victim.value?.core
    first.hook = { _ in victim.value = nil }
    Store<LogState<Freed>>.actions.dispatch(action: 1)
    #expect(first.committed.values == [1])
    #expect(second.committed.values.isEmpty, "a freed store committed")
    // Polled: a shared middleware added by a test running meanwhile walks every core, and
    // holds each for a moment.
    #expect(waitUntil { victimCore == nil }, "the dispatch kept the freed store's core")
    withExtendedLifetime(store) {}
  }

  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    @Test("The registry table finds every entry through its growth, and nothing else")
    func registryTableGrows() {
      var table = RegistryTable(bits: 2)
      var tables = [table]
      let keys = (1...1_000).map { UInt($0) &* 0x10 }
      for key in keys {
        if !table.hasRoom {
          table = table.grown()
          tables.append(table)
        }
        table.insert(UnsafeMutableRawPointer(bitPattern: key &* 3).unsafelyUnwrapped, for: key)
      }
      for key in keys { #expect(table.registry(for: key) == UnsafeMutableRawPointer(bitPattern: key &* 3)) }
      #expect(table.registry(for: 0x8) == nil)
      #expect(table.registry(for: 1_001 &* 0x10) == nil)
      // An old table still answers for what it held.
      #expect(tables[3].registry(for: keys[0]) == UnsafeMutableRawPointer(bitPattern: keys[0] &* 3))
      #expect(tables.count == 10)
    }
  #endif
}
