import Dispatch
import Foundation
import Observation
import Testing

@testable import FluxReactive

/// `variable.value += 1` and other changes in place are one atomic step, like `modify` (rule 5),
/// and a change, not a read.
@Suite("Changes in place")
struct VariableInPlaceTests {
  private struct Failure: Error {}

  @Test("inv5: value += 1 from many threads loses no update; observers see each change once, in order")
  func inv5_inPlaceAdditionIsAtomic() {
    let variable = Variable(0)
    let seen = Recorder<Int>()
    variable.signal.observe { seen.append($0) }
    race(threads: 4, iterations: 5_000) { _, _ in variable.value += 1 }
    #expect(variable.value == 20_000)
    let inOrder = seen.values == Array(0...20_000)
    #expect(inOrder, "\(seen.values.count) deliveries, not 0...20_000 in order")
  }

  @Test("inv5: value.append from many threads loses no element, for a value behind the value lock")
  func inv5_inPlaceAppendIsAtomic() {
    let variable = Variable([Int]())
    let deliveries = Counter()
    variable.signal.observe { _ in deliveries.increment() }
    race(threads: 4, iterations: 1_000) { thread, iteration in variable.value.append(thread * 1_000 + iteration) }
    let all = variable.value.sorted() == Array(0..<4_000)
    #expect(all, "\(variable.value.count) elements, not 0..<4_000")
    #expect(deliveries.value == 4_001)
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

  @Test("a += that reads its own one-word variable stops with the message of a reentrant modify body")
  func reentrantInPlaceChangeStopsWithMessage_word() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let variable = Variable(Reentrant(1))
      Reentrant.variable = { variable.value }
      variable.value += Reentrant(1)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: a Variable was read or set from inside"), "\(message)")
  }

  @Test("a += that reads its own locked variable stops with the message of a reentrant modify body")
  func reentrantInPlaceChangeStopsWithMessage_locked() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let variable = Variable(ReentrantText("a"))
      ReentrantText.variable = { variable.value }
      variable.value += ReentrantText("b")
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: a Variable was read or set from inside"), "\(message)")
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
