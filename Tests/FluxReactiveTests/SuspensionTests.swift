import Dispatch
import Foundation
import Testing

@testable import FluxReactive

/// Rule 20: no Flux lock is held across a suspension. An `inout` access to a variable's value
/// that spans an `await` is a get and a set; two in-place accesses at once work on one thread.
@Suite("Rule 20: no lock across a suspension")
struct SuspensionTests {
  /// Adds `amount` to `value` after a suspension that may resume on another thread.
  static func add(_ amount: Int, to value: inout Int) async {
    try? await Task.sleep(nanoseconds: 100_000)
    value += amount
  }

  /// Appends `suffix` to `text` on both sides of a suspension.
  static func append(_ suffix: String, to text: inout String) async {
    text += suffix
    await Task.yield()
    text += suffix
  }

  @Test("inv20: await f(&variable.value) works as a get and a set, resumed on any thread")
  func inv20_inoutAccessAcrossAnAwait() async {
    let variable = Variable(1)
    let seen = Recorder<Int>()
    variable.signal.observe { seen.append($0) }
    await Self.add(5, to: &variable.value)
    #expect(variable.value == 6)
    #expect(seen.values == [1, 6])
  }

  @Test("inv20: many tasks make inout accesses across awaits while others read and set: nothing crashes")
  func inv20_inoutAccessesAcrossAwaitsOnManyTasks() async {
    let number = Variable(0)
    let text = Variable("")
    let deliveries = Counter()
    number.signal.observe { _ in deliveries.increment() }
    text.signal.observe { _ in deliveries.increment() }
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<400 {
        group.addTask {
          switch index % 4 {
          case 0: await Self.add(1, to: &number.value)
          case 1: await Self.append(".", to: &text.value)
          case 2:
            _ = number.value
            _ = text.value
          default: number.modify { $0 += 1 }
          }
        }
      }
    }
    // Changes in place are not atomic: another task's change may come between a get and its set.
    #expect((1...200).contains(number.value))
    #expect(text.value.count % 2 == 0 && (2...200).contains(text.value.count))
    #expect(deliveries.value == 2 + 300, "every access and every modify delivers once")
  }

  @Test(
    "inv5, inv20: an observer and a values stream see the same changes in the same order when many tasks change a variable in place across awaits"
  )
  func inv5_observersAndStreamsAgreeOnChangesInPlaceAcrossAwaits() async {
    let text = Variable("")
    let observed = Recorder<String>()
    let observation = text.signal.observe { observed.append($0) }
    let stream = text.values
    let changes = 600
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<changes {
        group.addTask {
          switch index % 3 {
          case 0: await Self.append("a", to: &text.value)  // two appends around a suspension
          case 1: text.modify { $0 += "m" }
          default: text.value += "p"
          }
        }
      }
    }
    observation.dispose()
    text.value = "end"  // after every change: the loop below ends on it
    var streamed: [String] = []
    for await value in stream {
      if value == "end" { break }
      streamed.append(value)
    }
    #expect(observed.values.count == 1 + changes, "the current value, then one delivery per change")
    #expect(streamed == observed.values)
    // Changes in place are not atomic (another task's set may come between a get and its set),
    // but every set is delivered once, to both, in one order.
  }

  @Test("inv20: another task on the same thread reads and sets during the suspension of an inout access")
  func inv20_sameThreadTaskDuringTheSuspension() async {
    let actor = OneThreadActor()
    let outcome = await actor.changeWhileAnotherTaskReads()
    #expect(outcome.bothOnItsThread)
    #expect(outcome.readDuringTheSuspension == "a")
    #expect(outcome.final == "a+after", "the access ends with a set, over the set made during it")
    #expect(outcome.delivered == ["a", "set during", "a+after"])
    actor.executor.stop()
  }

  @Test("inv20: await variable.value.refresh(), a mutating async method of the value, holds no lock")
  func inv20_mutatingAsyncMethodOfTheValue() async {
    let actor = OneThreadActor()
    let outcome = await actor.refreshWhileAnotherTaskReads()
    #expect(outcome.read == 0)
    #expect(outcome.final == 1)
    actor.executor.stop()
    // And on many threads at once, with readers.
    let model = Variable(Model())
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<200 {
        group.addTask {
          if index % 2 == 0 {
            await model.value.refresh()
          } else {
            _ = model.value.count
          }
        }
      }
    }
    #expect((1...100).contains(model.value.count))
  }

  @MainActor
  @Test("inv20: inout accesses across awaits from the main actor, whichever thread drains it")
  func inv20_inoutAccessFromTheMainActor() async {
    let variable = Variable(0)
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<100 {
      tasks.append(
        Task { @MainActor in
          await Self.add(1, to: &variable.value)
          _ = variable.value
        })
    }
    for task in tasks { await task.value }
    #expect((1...100).contains(variable.value))
  }

  @Test("inv20: swap(&a.value, &b.value) on one thread swaps, and delivers each once")
  func inv20_swapOnOneThread() {
    let first = Variable("a")
    let second = Variable("b")
    let seen = Recorder<String>()
    first.signal.observe { seen.append("first \($0)") }
    second.signal.observe { seen.append("second \($0)") }
    swap(&first.value, &second.value)
    #expect(first.value == "b")
    #expect(second.value == "a")
    // The two accesses end in the reverse of the order they began: the second variable is set first.
    #expect(seen.values == ["first a", "second b", "second a", "first b"])
  }

  @Test("inv20, inv5: a swap where an observer of one variable reads the other works")
  func inv20_swapWhoseObserverReadsTheOther() {
    let first = Variable(1)
    let second = Variable("b")
    let readings = Recorder<String>()
    let other = Variable(2)
    // Each observer keeps the other variable: disposed at the end, so that nothing is left in a cycle.
    let readingObservers = [
      second.signal.observe { _ in readings.append("first is \(first.value), other is \(other.value)") },
      first.signal.observe { _ in readings.append("second is \(second.value)") },
    ]
    defer { for observer in readingObservers { observer.dispose() } }
    swap(&first.value, &other.value)
    #expect(first.value == 2)
    #expect(other.value == 1)
    second.value = "c"
    #expect(readings.values.last == "first is 2, other is 1")
    let left = Variable("x")
    let right = Variable("y")
    let seen = Recorder<String>()
    right.signal.observe { _ in seen.append(left.value) }
    swap(&left.value, &right.value)
    // The right one is set first (accesses end in reverse order): its observer reads the left one
    // before the left one's set.
    #expect(seen.values == ["x", "x"])
    #expect(left.value == "y" && right.value == "x")
  }

  @Test("inv20: swaps of two variables in opposite orders on two threads neither deadlock nor crash")
  func inv20_swapsInOppositeOrdersOnTwoThreads() {
    let first = Variable("a")
    let second = Variable("b")
    let deliveries = Counter()
    first.signal.observe { _ in deliveries.increment() }
    second.signal.observe { _ in deliveries.increment() }
    let iterations = 20_000
    let finished = finishOnThreads(2, within: 60) { thread in
      for iteration in 0..<iterations {
        if thread == 0 { swap(&first.value, &second.value) } else { swap(&second.value, &first.value) }
        if iteration % 64 == 0 { yieldThread() }
      }
    }
    #expect(finished, "the swapping threads deadlocked")
    guard finished else { return }
    #expect(Set([first.value, second.value]).isSubset(of: ["a", "b"]))
    #expect(deliveries.value == 2 + 2 * 2 * iterations)
  }
}

/// A value with a mutating async method.
struct Model: Sendable {
  var count = 0

  mutating func refresh(after gate: Gate? = nil) async {
    if let gate { await gate.wait() } else { await Task.yield() }
    count += 1
  }
}

/// A one-time signal between tasks.
final class Gate: Sendable {
  private let stream: AsyncStream<Void>
  private let continuation: AsyncStream<Void>.Continuation

  init() {
    (stream, continuation) = AsyncStream.makeStream()
  }

  func open() {
    continuation.finish()
  }

  func wait() async {
    for await _ in stream {}
  }
}

extension OneThreadActor {
  struct ChangeOutcome: Sendable {
    var bothOnItsThread: Bool
    var readDuringTheSuspension: String
    var final: String
    var delivered: [String]
  }

  /// One task changes a variable in place across a suspension; another task of this actor, on
  /// the same thread, reads and sets it meanwhile, then lets the first go on.
  func changeWhileAnotherTaskReads() async -> ChangeOutcome {
    let variable = Variable("a")
    let delivered = Recorder<String>()
    variable.signal.observe { delivered.append($0) }
    let gate = Gate()
    let suspended = Gate()
    let first = Task { () -> Bool in
      await self.appendAfter(gate, to: &variable.value, signalling: suspended)
      return self.isOnItsThread()
    }
    await suspended.wait()
    let onItsThread = isOnItsThread()
    let read = variable.value
    variable.value = "set during"
    gate.open()
    let firstOnItsThread = await first.value
    return ChangeOutcome(
      bothOnItsThread: onItsThread && firstOnItsThread, readDuringTheSuspension: read,
      final: variable.value, delivered: delivered.values)
  }

  private func appendAfter(_ gate: Gate, to text: inout String, signalling suspended: Gate) async {
    suspended.open()
    await gate.wait()
    text += "+after"
  }

  /// `await variable.value.refresh()` on this actor, while another of its tasks reads it.
  func refreshWhileAnotherTaskReads() async -> (read: Int, final: Int) {
    let variable = Variable(Model())
    let gate = Gate()
    let refreshing = Task { await variable.value.refresh(after: gate) }
    await Task.yield()
    let read = variable.value.count
    gate.open()
    await refreshing.value
    return (read, variable.value.count)
  }
}
