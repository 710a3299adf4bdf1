import Dispatch
import Foundation
import Testing

@testable import FluxReactive

@Suite("values: signals, variables and constants as AsyncStreams")
struct ValuesTests {
  /// A signal whose producer the test controls: it hands out the observer and a disposable.
  private final class ManualSource: @unchecked Sendable {
    // Only touched by the test's task, one step after another.
    var observer: ((Int) -> Void)?
    let subscription = AnyDisposable()

    var signal: Signal<Int> {
      Signal { observer in
        self.observer = observer
        return self.subscription
      }
    }
  }

  @Test("a signal's stream yields every value sent after it was made, in order, none dropped")
  func signalStreamKeepsEveryValue() async {
    let sink = Sink<Int>()
    let values = sink.signal.values
    for value in 1...1_000 { sink.send(value: value) }
    var received: [Int] = []
    for await value in values {
      received.append(value)
      if value == 1_000 { break }
    }
    #expect(received == Array(1...1_000))
  }

  @Test("inv6: breaking the loop disposes the observation once the stream is gone")
  func inv6_breakDisposes() async {
    let sink = Sink<Int>()
    do {
      let values = sink.signal.values
      #expect(sink.core.observerCount == 1)
      sink.send(value: 1)
      for await _ in values { break }
    }
    #expect(sink.core.observerCount == 0)

    let variable = Variable(0)
    for await _ in variable.values { break }
    #expect(variable.core.observerCount == 0)
  }

  @Test("inv6: dropping a stream that was never iterated disposes the observation")
  func inv6_droppedStreamDisposes() {
    let sink = Sink<Int>()
    do {
      let values = sink.signal.values
      #expect(sink.core.observerCount == 1)
      _ = values
    }
    #expect(sink.core.observerCount == 0)
  }

  /// A task that loops over `values` and passes each one on, and an iterator over what it
  /// passes on.
  private static func loop(over values: AsyncStream<Int>) -> (Task<Void, Never>, AsyncStream<Int>.Iterator) {
    let (seen, seenContinuation) = AsyncStream.makeStream(of: Int.self)
    let task = Task {
      for await value in values { seenContinuation.yield(value) }
    }
    return (task, seen.makeAsyncIterator())
  }

  @Test("inv6: cancelling the iterating task disposes the observation")
  func inv6_cancelDisposes() async {
    let sink = Sink<Int>()
    let values = sink.signal.values
    let (task, passedOn) = Self.loop(over: values)
    var seenValues = passedOn
    sink.send(value: 1)
    #expect(await seenValues.next() == 1)
    #expect(sink.core.observerCount == 1)
    task.cancel()
    await task.value
    #expect(sink.core.observerCount == 0)
  }

  @Test("inv6: cancelling a waiting loop while another thread delivers to its stream does not deadlock")
  func inv6_cancelDuringDeliveryDoesNotDeadlock() async {
    // `task.cancel()` runs the stream's `onTermination` under the task's own status lock, and
    // a delivery that yields to the waiting loop needs that lock to resume it: disposing the
    // observation there must not wait for that delivery.
    let sink = Sink<Int>()
    let delivering = DispatchSemaphore(value: 0)
    let first = sink.signal.observe { value in
      guard value == 2 else { return }
      delivering.signal()
      usleep(200_000)  // lets the other thread start cancelling, which waits for this delivery
    }
    let values = sink.signal.values
    let (task, passedOn) = Self.loop(over: values)
    var seenValues = passedOn
    sink.send(value: 1)
    #expect(await seenValues.next() == 1)  // the loop now waits for the next value
    let done = LockedValue(0)
    Thread {
      sink.send(value: 2)
      done.withLock { $0 += 1 }
    }.start()
    Thread {
      delivering.wait()
      task.cancel()
      done.withLock { $0 += 1 }
    }.start()
    let finished = await eventuallyWithin(seconds: 10) { done.current == 2 }
    #expect(finished, "task.cancel() and the delivery to the stream deadlocked")
    guard finished else {
      _ = Unmanaged.passRetained(Box((sink, task, first)))  // the stuck threads hold their locks
      return
    }
    await task.value
    #expect(await eventually { sink.core.observerCount == 1 })
    first.dispose()
  }

  @Test("inv6: a task cancelled before it iterates disposes the observation")
  func inv6_cancelBeforeIterationDisposes() async {
    let variable = Variable(0)
    let values = variable.values
    // A stream that never yields: its loop ends only when the task is cancelled.
    let (gate, gateContinuation) = AsyncStream.makeStream(of: Void.self)
    let task = Task {
      for await _ in gate {}
      for await _ in values {}
    }
    #expect(variable.core.observerCount == 1)
    task.cancel()
    await task.value
    #expect(variable.core.observerCount == 0)
    gateContinuation.finish()
  }

  @Test("the loop ends when the signal releases its observer, and the observation is disposed")
  func releasedObserverEndsTheLoop() async {
    let source = ManualSource()
    let values = source.signal.values
    source.observer?(1)
    source.observer?(2)
    source.observer = nil
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == [1, 2])
    #expect(source.subscription.isDisposed)
  }

  @Test("freeing the sink ends the loop, through map too")
  func freedSinkEndsTheLoop() async {
    var sink: Sink<Int>? = Sink()
    let values = sink!.signal.values
    let doubled = sink!.signal.map { $0 * 2 }.values
    sink?.send(value: 1)
    sink?.send(value: 2)
    sink = nil
    var received: [Int] = []
    for await value in values { received.append(value) }
    for await value in doubled { received.append(value) }
    #expect(received == [1, 2, 2, 4])
  }

  @Test("inv5_variableStreamStartsWithTheCurrentValueThenEveryChange")
  func inv5_variableStreamStartsWithTheCurrentValueThenEveryChange() async {
    let variable = Variable(1)
    let values = variable.values
    variable.value = 2
    variable.modify { $0 = 3 }
    var received: [Int] = []
    for await value in values {
      received.append(value)
      if value == 3 { break }
    }
    #expect(received == [1, 2, 3])
  }

  @Test("a fixed constant's stream yields its value and finishes")
  func fixedConstantYieldsOnce() async {
    var received: [String] = []
    for await value in Constant("fixed").values { received.append(value) }
    #expect(received == ["fixed"])
  }

  @Test("a constant view's stream follows its variable and ends when the variable is freed")
  func constantViewFollowsItsVariable() async {
    var variable: Variable<Int>? = Variable(0)
    let values = variable!.constant.values
    variable?.value = 1
    #expect(variable?.core.observerCount == 1)
    variable = nil
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == [0, 1])
  }

  @Test("bufferingNewest(1) keeps only the latest value of a variable or constant")
  func bufferingNewest() async {
    let variable = Variable(1)
    let fromVariable = variable.values(bufferingPolicy: .bufferingNewest(1))
    let fromConstant = variable.constant.values(bufferingPolicy: .bufferingNewest(1))
    for value in 2...4 { variable.value = value }
    var variableValues = fromVariable.makeAsyncIterator()
    var constantValues = fromConstant.makeAsyncIterator()
    #expect(await variableValues.next() == 4)
    #expect(await constantValues.next() == 4)
    variable.value = 5
    #expect(await variableValues.next() == 5)
    #expect(await constantValues.next() == 5)
  }

  @Test("bufferingOldest(2) keeps the first values of a sink")
  func bufferingOldest() async {
    var sink: Sink<Int>? = Sink()
    let values = sink!.signal.values(bufferingPolicy: .bufferingOldest(2))
    for value in 1...5 { sink?.send(value: value) }
    sink = nil
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == [1, 2])
  }
}
