import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

@Suite("Sink")
struct SinkTests {
  @Test("inv1: delivers synchronously, on the sending thread, in the order observers were added")
  func inv1_synchronousInOrderOnSenderThread() async {
    let sink = Sink<Int>()
    let seen = Recorder<String>()
    let threads = Recorder<ObjectIdentifier>()
    let sender = Recorder<ObjectIdentifier>()
    for index in 0..<5 {
      sink.signal.observe { value in
        seen.append("\(index):\(value)")
        threads.append(ObjectIdentifier(Thread.current))
      }
    }
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      sender.append(ObjectIdentifier(Thread.current))
      sink.send(value: 1)
      seen.append("returned")
      done.signal()
    }
    thread.start()
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        done.wait()
        continuation.resume()
      }
    }
    #expect(seen.values == ["0:1", "1:1", "2:1", "3:1", "4:1", "returned"])
    #expect(threads.values == Array(repeating: sender.values[0], count: 5))
  }

  @Test("inv2: a send from inside an observer is queued, not nested, and delivered before the outer send returns")
  func inv2_reentrantSendIsQueued() {
    let sink = Sink<Int>()
    let events = Recorder<String>()
    sink.signal.observe { value in
      events.append("a begin \(value)")
      if value == 1 {
        sink.send(value: 2)
        events.append("a inner send returned")
        sink.send(value: 3)
      }
      events.append("a end \(value)")
    }
    sink.signal.observe { value in events.append("b \(value)") }
    sink.send(value: 1)
    events.append("outer returned")
    #expect(
      events.values == [
        "a begin 1", "a inner send returned", "a end 1", "b 1",
        "a begin 2", "a end 2", "b 2",
        "a begin 3", "a end 3", "b 3",
        "outer returned",
      ])
  }

  @Test("inv2: every observer sees one and the same order, with reentrant sends from several observers")
  func inv2_sameOrderForAllObservers() {
    let sink = Sink<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    sink.signal.observe { value in
      first.append(value)
      if value < 10 { sink.send(value: value * 10) }
    }
    sink.signal.observe { value in
      second.append(value)
      if value < 10 { sink.send(value: value * 10 + 1) }
    }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(first.values == second.values)
    #expect(first.values == [1, 10, 11, 2, 20, 21])
  }

  @Test("inv3: sends from several threads never overlap and return after delivery")
  func inv3_crossThreadSendsSerialized() {
    let sink = Sink<Int>()
    let inside = Counter()
    let overlaps = Counter()
    let delivered = Recorder<Int>()
    sink.signal.observe { value in
      if inside.increment() > 1 { overlaps.increment() }
      delivered.append(value)
      inside.decrement()
    }
    let lateDeliveries = Counter()
    let seenByObserver = Box(Set<Int>())
    let seenLock = NSLock()
    sink.signal.observe { value in seenLock.withLock { _ = seenByObserver.value.insert(value) } }
    race(threads: 4, iterations: 2_000) { thread, index in
      let value = thread * 100_000 + index
      sink.send(value: value)
      if !seenLock.withLock({ seenByObserver.value.contains(value) }) { lateDeliveries.increment() }
    }
    #expect(overlaps.value == 0)
    #expect(lateDeliveries.value == 0, "a send returned before its value reached every observer")
    #expect(delivered.values.count == 8_000)
  }

  @Test("inv4: an observer added during a delivery does not get the value being delivered")
  func inv4_addedDuringDeliveryMissesValue() {
    let sink = Sink<Int>()
    let late = Recorder<Int>()
    // Read and written only by deliveries, which never overlap.
    let added = Box(false)
    sink.signal.observe { _ in
      if !added.value {
        added.value = true
        sink.signal.observe { late.append($0) }
      }
    }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(late.values == [2])
  }

  @Test("inv4: an observer disposed during a delivery gets nothing more, not even later in that delivery")
  func inv4_disposedDuringDeliveryGetsNothingMore() {
    let sink = Sink<Int>()
    // Both set on this thread before the sends, whose deliveries run on it too.
    let second = Box<(any Disposable)?>(nil)
    let secondSeen = Recorder<Int>()
    let selfSeen = Recorder<Int>()
    let selfDisposable = Box<(any Disposable)?>(nil)
    selfDisposable.value = sink.signal.observe { value in
      selfSeen.append(value)
      selfDisposable.value?.dispose()
      sink.send(value: value + 100)  // queued; the disposed observer must not get it
    }
    sink.signal.observe { _ in second.value?.dispose() }
    second.value = sink.signal.observe { secondSeen.append($0) }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(selfSeen.values == [1])
    #expect(secondSeen.values.isEmpty)
  }

  @Test("inv4: a newcomer in the slot of an observer disposed during the delivery misses that value")
  func inv4_newcomerInDisposedSlotMissesValue() {
    let sink = Sink<Int>()
    let lastSeen = Recorder<Int>()
    let newcomerSeen = Recorder<Int>()
    // Set and read on this thread only: before the send, and inside its delivery.
    let last = Box<(any Disposable)?>(nil)
    let newcomer = Box<(any Disposable)?>(nil)
    sink.signal.observe { value in
      guard value == 1 else { return }
      // Disposing the newest observer drops its slot; the newcomer takes that position.
      last.value?.dispose()
      newcomer.value = sink.signal.observe { newcomerSeen.append($0) }
    }
    last.value = sink.signal.observe { lastSeen.append($0) }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(lastSeen.values.isEmpty)
    #expect(newcomerSeen.values == [2])
    withExtendedLifetime(newcomer) {}
  }

  @Test("inv6: an observer that disposes itself during its call is released when the delivery ends")
  func inv6_selfDisposedObserverReleasedAfterDelivery() {
    final class Payload: Sendable {}
    let sink = Sink<Int>()
    weak var weakPayload: Payload?
    // Set on this thread before the send, used by the delivery on this thread.
    let own = Box<(any Disposable)?>(nil)
    do {
      let payload = Payload()
      weakPayload = payload
      own.value = sink.signal.observe { _ in
        own.value?.dispose()
        own.value = nil
        withExtendedLifetime(payload) {}  // still alive while its observer runs
      }
    }
    #expect(weakPayload != nil)
    sink.send(value: 1)
    #expect(weakPayload == nil)
  }

  @Test("dropping the last reference to a sink during its own delivery does not crash")
  func droppingSinkDuringDelivery() {
    // The box holds the only reference; the delivery, on this thread, drops it.
    let sink = Box<Sink<Int>?>(Sink<Int>())
    let seen = Recorder<Int>()
    let signal = sink.value!.signal
    signal.observe { value in
      seen.append(value)
      sink.value = nil
    }
    signal.observe { seen.append($0 * 10) }
    sink.value?.send(value: 1)
    #expect(sink.value == nil)
    #expect(seen.values == [1, 10], "the sending call keeps the sink alive until its delivery ends")
    #expect(signal.observe { _ in }.isDisposed, "observing an ended sink returns a disposed disposable")
  }
}
