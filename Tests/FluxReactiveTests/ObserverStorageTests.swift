import FluxReactive
import Testing

/// Delivery walks the live observer slots by position; these pin down the edge cases of that.
@Suite("Observer storage")
struct ObserverStorageTests {
  final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
  }

  @Test("inv4: an observer that disposes itself mid-call finishes that call and gets nothing more")
  func disposeSelfDuringDelivery() {
    let sink = Sink<Int>()
    let seen = Box<[String]>([])
    let own = Box<(any Disposable)?>(nil)
    own.value = sink.signal.observe { value in
      own.value?.dispose()
      seen.value.append("self \(value)")
    }
    sink.signal.observe { seen.value.append("other \($0)") }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(seen.value == ["self 1", "other 1", "other 2"])
    #expect(own.value?.isDisposed == true)
  }

  @Test("inv4: disposing the newest observer, then adding one, during a delivery")
  func disposeNewestThenAddDuringDelivery() {
    let sink = Sink<Int>()
    let seen = Box<[String]>([])
    let last = Box<(any Disposable)?>(nil)
    sink.signal.observe { value in
      seen.value.append("first \(value)")
      guard value == 1 else { return }
      last.value?.dispose()
      sink.signal.observe { seen.value.append("added \($0)") }
    }
    last.value = sink.signal.observe { seen.value.append("last \($0)") }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(seen.value == ["first 1", "first 2", "added 2"])
  }

  @Test("inv2, inv4: a queued value reaches the observers present at its send, minus those disposed since")
  func reentrantSendsWithChurn() {
    let sink = Sink<Int>()
    let seen = Box<[String]>([])
    let added = Box<(any Disposable)?>(nil)
    // Captures the sink: disposed at the end, so that the test leaves no cycle behind.
    let first = sink.signal.observe { value in
      seen.value.append("a \(value)")
      guard value == 1 else { return }
      added.value = sink.signal.observe { value in
        seen.value.append("b \(value)")
        added.value?.dispose()
        sink.send(value: value + 1)
      }
      sink.send(value: 2)
    }
    let late = Box<(any Disposable)?>(nil)
    late.value = sink.signal.observe { value in
      seen.value.append("c \(value)")
      if value == 1 { late.value?.dispose() }
    }
    sink.send(value: 1)
    #expect(seen.value == ["a 1", "c 1", "a 2", "b 2", "a 3"])
    first.dispose()
  }

  @Test("inv6: a disposable outliving its sink reports disposed and disposes harmlessly")
  func disposableOutlivesSink() {
    var sink: Sink<Int>? = Sink<Int>()
    let disposable = sink!.signal.observe { _ in }
    #expect(!disposable.isDisposed)
    sink = nil
    #expect(disposable.isDisposed)
    disposable.dispose()
    #expect(disposable.isDisposed)
  }
}

extension ObserverStorageTests {
  @Test("inv1: observers keep the order they were added in once disposals have compacted the storage")
  func inv1_orderSurvivesCompaction() {
    let sink = Sink<Int>()
    let seen = Recorder<Int>()
    var disposables: [any Disposable] = []
    for index in 0..<60 {
      disposables.append(sink.signal.observe { _ in seen.append(index) })
    }
    // Two of every three go, the newest kept: holes outnumber observers, so the storage compacts.
    for index in 0..<60 where index % 3 != 2 { disposables[index].dispose() }
    for index in 60..<65 { disposables.append(sink.signal.observe { _ in seen.append(index) }) }
    sink.send(value: 1)
    #expect(seen.values == Array(stride(from: 2, to: 60, by: 3)) + Array(60..<65))
    withExtendedLifetime(disposables) {}
  }
}
