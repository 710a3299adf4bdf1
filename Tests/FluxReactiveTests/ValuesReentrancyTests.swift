import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

/// A producer as an app writes one: it keeps each observer in a dictionary guarded by its own
/// (non-recursive) lock, removes it there when the observation is disposed, and ends every
/// observation at once by clearing the dictionary, under the same lock.
private final class Feed: @unchecked Sendable {
  private let lock = DispatchSemaphore(value: 1)
  // Guarded by `lock`.
  private var observers: [Int: @Sendable (Int) -> Void] = [:]
  // Guarded by `lock`.
  private var nextID = 0

  var signal: Signal<Int> {
    Signal { observer in
      self.lock.wait()
      let id = self.nextID
      self.nextID += 1
      self.observers[id] = observer
      self.lock.signal()
      return AnyDisposable {
        self.lock.wait()
        let removed = self.observers.removeValue(forKey: id)
        self.lock.signal()
        _ = removed  // released after the lock
      }
    }
  }

  func send(_ value: Int) {
    lock.wait()
    let current = Array(observers.values)
    lock.signal()
    for observer in current { observer(value) }
  }

  /// Ends the feed: drops every observer, under the lock.
  func close() {
    lock.wait()
    observers.removeAll()
    lock.signal()
  }
}

@Suite("values: a producer that ends by releasing its observer")
struct ValuesReentrancyTests {
  @Test("inv16: a producer that releases its observers under its own lock does not deadlock a values stream")
  func inv16_releaseUnderProducerLockDoesNotDeadlock() async {
    let feed = Feed()
    let values = feed.signal.values
    feed.send(1)
    let closed = LockedValue(false)
    Thread {
      feed.close()  // drops the stream's observer under the feed's lock
      closed.withLock { $0 = true }
    }.start()
    var waited = 0
    while !closed.current && waited < 5_000 {
      try? await Task.sleep(nanoseconds: 1_000_000)
      waited += 1
    }
    #expect(closed.current, "close() deadlocked: the stream disposed the producer's subscription inside close()")
    guard closed.current else { return }  // the closing thread stays stuck
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == [1])
  }
}
