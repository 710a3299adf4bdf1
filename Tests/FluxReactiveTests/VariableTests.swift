import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

@Suite("Variable")
struct VariableTests {
  @Test("inv5: signal delivers the current value, then every change, none lost or doubled under a racing setter")
  func inv5_replayWithoutLossUnderRace() {
    for _ in 0..<50 {
      let variable = Variable(0)
      let last = 2_000
      let seen = Recorder<Int>()
      let started = DispatchSemaphore(value: 0)
      let setter = Thread {
        started.signal()
        for value in 1...last { variable.value = value }
      }
      setter.start()
      started.wait()
      let disposable = variable.signal.observe { seen.append($0) }
      #expect(waitUntil { seen.values.last == last })
      let values = seen.values
      #expect(values == Array(values.first!...last), "lost or doubled a change: \(values.prefix(10))")
      disposable.dispose()
    }
  }

  @Test("inv5: modify from many threads loses no update; observers see each change once, in order")
  func inv5_modifyIsAtomic() {
    let variable = Variable(0)
    let seen = Recorder<Int>()
    variable.signal.observe { seen.append($0) }
    race(threads: 4, iterations: 2_500) { _, _ in variable.modify { $0 += 1 } }
    #expect(variable.value == 10_000)
    #expect(seen.values == Array(0...10_000))
  }

  @Test("inv5: reading and setting the value from inside its own observer works")
  func inv5_readAndSetInsideObserver() {
    let variable = Variable(0)
    let seen = Recorder<String>()
    variable.signal.observe { value in
      seen.append("a \(value) read \(variable.value)")
      if value == 1 { variable.value = 2 }
    }
    variable.signal.observe { value in seen.append("b \(value)") }
    variable.value = 1
    #expect(variable.value == 2)
    #expect(seen.values == ["a 0 read 0", "b 0", "a 1 read 1", "b 1", "a 2 read 2", "b 2"])
  }

  @Test("inv5: reading and setting a value that does not fit a word, from inside its own observer, works")
  func inv5_readAndSetInsideObserverOfAValueOutsideAWord() {
    // A `String` is not a plain word: `set` takes the value lock path, not the atomic word.
    let variable = Variable("0")
    let seen = Recorder<String>()
    // Captures the variable: disposed at the end, so that the test leaves no cycle behind.
    let reading = variable.signal.observe { value in
      seen.append("a \(value) read \(variable.value)")
      if value == "1" { variable.value = "2" }
    }
    variable.signal.observe { value in seen.append("b \(value)") }
    variable.value = "1"
    #expect(variable.value == "2")
    #expect(seen.values == ["a 0 read 0", "b 0", "a 1 read 1", "b 1", "a 2 read 2", "b 2"])
    reading.dispose()
  }

  @Test("inv5: an observer added during a delivery gets the current value once, then changes")
  func inv5_observeDuringDelivery() {
    let variable = Variable(0)
    let late = Recorder<Int>()
    variable.signal.observe { value in
      if value == 1 {
        variable.value = 2  // queued
        variable.signal.observe { late.append($0) }  // replays 2 now; must not get 2 again
      }
    }
    variable.value = 1
    variable.value = 3
    #expect(late.values == [2, 3])
  }

  @Test("inv2: a variable freed inside a replay still delivers a value set there to every observer")
  func inv2_freedInsideReplayDeliversWhatWasSet() {
    let holder = LockedValue<Variable<String>?>(Variable("a"))
    let signal = holder.current!.signal
    let first = Recorder<String>()
    signal.observe { first.append($0) }
    let second = Recorder<String>()
    signal.observe { value in  // its replay is a delivery: the set below is queued
      second.append(value)
      guard value == "a", let variable = holder.takeValue() else { return }
      variable.value = "b"
      // `variable` was the last reference: the variable is freed here, inside the delivery.
    }
    #expect(first.values == ["a", "b"])
    #expect(second.values == ["a", "b"])
  }

  @Test("inv2: a variable freed while its queued values are delivered: every observer sees the same values")
  func inv2_freedDuringQueuedDelivery() {
    let holder = LockedValue<Variable<String>?>(Variable("a"))
    let signal = holder.current!.signal
    let first = Recorder<String>()
    signal.observe { value in
      first.append(value)
      if value == "b" { _ = holder.takeValue() }  // the last reference: freed here
    }
    let second = Recorder<String>()
    signal.observe { second.append($0) }
    let third = Recorder<String>()
    signal.observe { value in
      third.append(value)
      if value == "a" { holder.current?.value = "b" }  // queued behind this replay
    }
    #expect(first.values == ["a", "b"])
    #expect(second.values == first.values)
    #expect(third.values == first.values)
    // Once the delivery ended, the freed variable's observers are gone.
    let late = Recorder<String>()
    signal.observe { late.append($0) }
    #expect(late.values == ["b"])  // a signal of a freed variable still replays its last value once
  }

  @Test("inv5: modify returns what its body returns, and a throwing body delivers what it left")
  func modifyResultAndThrow() {
    struct Failure: Error {}
    let variable = Variable([1])
    let seen = Recorder<[Int]>()
    variable.signal.observe { seen.append($0) }
    let count = variable.modify { values -> Int in
      values.append(2)
      return values.count
    }
    #expect(count == 2)
    #expect(throws: Failure.self) {
      try variable.modify { values in
        values.append(3)
        throw Failure()
      }
    }
    #expect(variable.value == [1, 2, 3])
    #expect(seen.values == [[1], [1, 2], [1, 2, 3]])
  }

  @Test("a constant reflects its variable, and keeps the last value after the variable is freed")
  func constantOutlivesVariable() {
    var variable: Variable<Int>? = Variable(1)
    let constant = variable!.constant
    variable?.value = 2
    variable = nil
    #expect(constant.value == 2)
    let seen = Recorder<Int>()
    constant.signal.observe { seen.append($0) }
    #expect(seen.values == [2])
    let fixed = Constant("fixed")
    let fixedSeen = Recorder<String>()
    let disposable = fixed.signal.observe { fixedSeen.append($0) }
    #expect(fixedSeen.values == ["fixed"])
    #expect(disposable.isDisposed)
  }
}

extension LockedValue {
  /// Takes the value out, leaving `nil`; the caller holds it, outside the lock.
  func takeValue<Wrapped>() -> Wrapped? where Value == Wrapped? {
    withLock { value in
      defer { value = nil }
      return value
    }
  }
}

extension VariableTests {
  @Test(
    "inv16: a variable releases the value it replaced after its locks: that value's deinit may read the variable on another thread"
  )
  func inv16_replacedValueReleasedOutsideTheVariableLocks() {
    let variable = Variable<RunsElsewhereWhenFreed?>(nil)
    variable.value = RunsElsewhereWhenFreed { _ = variable.value }
    #expect(
      finishOnThreads(1, within: 5) { _ in variable.value = nil }, "the replaced value was released under a lock")
  }
}
