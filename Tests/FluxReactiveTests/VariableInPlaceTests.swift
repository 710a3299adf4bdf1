import Dispatch
import Foundation
import Observation
import Testing

@testable import FluxReactive

/// `variable.value += 1` and other changes in place are a get and a set (rule 20), delivered
/// once, and a change, not a read; `modify` is the atomic read-modify-write (rule 5), and changes
/// a collection without copying it.
@Suite("Changes in place")
struct VariableInPlaceTests {
  private struct Failure: Error {}

  @Test("inv5: value += 1 on one thread delivers each change once, in order")
  func inv5_inPlaceAdditionDeliversEachChange() {
    let variable = Variable(0)
    let seen = Recorder<Int>()
    variable.signal.observe { seen.append($0) }
    for _ in 0..<1_000 { variable.value += 1 }
    #expect(variable.value == 1_000)
    #expect(seen.values == Array(0...1_000))
  }

  @Test("inv20: value += 1 from many threads is a get and a set: each delivered once, nothing crashes")
  func inv20_inPlaceAdditionFromManyThreadsIsAGetAndASet() {
    let number = Variable(0)
    let text = Variable("")
    let deliveries = Counter()
    number.signal.observe { _ in deliveries.increment() }
    text.signal.observe { _ in deliveries.increment() }
    race(threads: 4, iterations: 2_000) { _, _ in
      number.value += 1
      text.value += "."
    }
    // Two threads may both read 5 and both set 6: a change in place is not atomic.
    #expect((1...8_000).contains(number.value))
    #expect((1...8_000).contains(text.value.count))
    #expect(deliveries.value == 2 + 2 * 8_000, "every set is delivered once")
  }

  @Test("inv5: modify appends to an array in place: the buffer is not copied")
  func inv5_modifyAppendsWithoutCopying() {
    let variable = Variable([Int]())
    let deliveries = Counter()
    variable.signal.observe { _ in deliveries.increment() }
    variable.modify { $0.reserveCapacity(1_000) }
    var buffers = Set<UInt>()
    for element in 0..<500 {
      let buffer = variable.modify { array in
        array.append(element)
        return array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
      }
      buffers.insert(buffer)
    }
    #expect(buffers.count == 1, "the array was copied \(buffers.count - 1) times in 500 appends")
    #expect(variable.value == Array(0..<500))
    #expect(deliveries.value == 502)
  }

  @Test("inv5: modify appends to a string in place, and removes from an array in place")
  func inv5_modifyChangesAStringAndRemovesWithoutCopying() {
    let text = Variable("")
    text.modify { $0.reserveCapacity(1_000) }
    var buffers = Set<UInt>()
    for _ in 0..<500 {
      buffers.insert(
        text.modify { text in
          text.append("x")
          return text.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } ?? 0
        })
    }
    #expect(buffers.count == 1, "the string was copied \(buffers.count - 1) times in 500 appends")
    let numbers = Variable(Array(0..<1_000))
    var removing = Set<UInt>()
    for _ in 0..<500 {
      removing.insert(
        numbers.modify { array in
          array.removeLast()
          return array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        })
    }
    #expect(removing.count == 1, "the array was copied \(removing.count - 1) times in 500 removals")
    #expect(numbers.value == Array(0..<500))
  }

  @Test("a change in place delivers once, and is not a read: it makes no Observation registrar")
  func inPlaceChangeIsOneChangeAndNoRead() {
    let variable = Variable(1)
    let text = Variable("a")
    let seen = Recorder<Int>()
    variable.signal.observe { seen.append($0) }
    variable.value += 1
    text.value += "b"
    #expect(seen.values == [1, 2])
    #expect(variable.core.registration == nil)
    #expect(text.core.registration == nil)
    #expect(text.value == "ab")
  }

  @Test("the right-hand side of += may read the same variable: it is evaluated before the change begins")
  func rightHandSideReadsTheSameVariable() {
    let number = Variable(3)
    let text = Variable("ab")
    number.value += number.value
    text.value += text.value
    #expect(number.value == 6)
    #expect(text.value == "abab")
  }

  @Test("a change in place of a tracked value calls onChange once")
  func inPlaceChangeOfATrackedValue() {
    let variable = Variable(1)
    let changes = Counter()
    withObservationTracking({ _ = variable.value }, onChange: { changes.increment() })
    variable.value += 1
    variable.value += 1
    #expect(changes.value == 1)
    #expect(variable.value == 3)
  }

  @Test("inv5: an inout access that changes the value and then throws delivers what it left, once")
  func inv5_throwingInoutAccessDeliversTheChange() {
    func setThenThrow<Value>(_ value: inout Value, to newValue: Value) throws {
      value = newValue
      throw Failure()
    }
    let word = Variable(1)
    let locked = Variable("a")
    let seenWord = Recorder<Int>()
    let seenLocked = Recorder<String>()
    word.signal.observe { seenWord.append($0) }
    locked.signal.observe { seenLocked.append($0) }
    #expect(throws: Failure.self) { try setThenThrow(&word.value, to: 2) }
    #expect(throws: Failure.self) { try setThenThrow(&locked.value, to: "b") }
    #expect(word.value == 2)
    #expect(locked.value == "b")
    #expect(seenWord.values == [1, 2])
    #expect(seenLocked.values == ["a", "b"])
  }

  @Test("inv20: a += whose operator reads its own one-word variable reads the value from before the change")
  func inv20_inPlaceChangeThatReadsItsOwnVariable_word() {
    let variable = Variable(Reentrant(1))
    Reentrant.variable = { variable.value }
    defer { Reentrant.variable = { Reentrant(0) } }
    variable.value += Reentrant(1)
    #expect(variable.value.number == 3)  // 1 + 1 + the 1 read during the change
  }

  @Test("inv20: a += whose operator reads its own locked variable reads the value from before the change")
  func inv20_inPlaceChangeThatReadsItsOwnVariable_locked() {
    let variable = Variable(ReentrantText("a"))
    ReentrantText.variable = { variable.value }
    defer { ReentrantText.variable = { ReentrantText("") } }
    variable.value += ReentrantText("b")
    #expect(variable.value.text == "aba")
  }
}

/// A one-word value whose `+=` reads a variable, through `variable`.
private struct Reentrant: Sendable {
  nonisolated(unsafe) static var variable: () -> Reentrant = { Reentrant(0) }
  var number: Int

  init(_ number: Int) { self.number = number }

  static func += (lhs: inout Reentrant, rhs: Reentrant) {
    lhs.number += rhs.number + variable().number
  }
}

/// A value behind the value lock whose `+=` reads a variable, through `variable`.
private struct ReentrantText: Sendable {
  nonisolated(unsafe) static var variable: () -> ReentrantText = { ReentrantText("") }
  var text: String

  init(_ text: String) { self.text = text }

  static func += (lhs: inout ReentrantText, rhs: ReentrantText) {
    lhs.text += rhs.text + variable().text
  }
}
