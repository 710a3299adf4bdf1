import Dispatch
import Foundation
import Observation
import Testing

@testable import FluxReactive

/// A change that stays is a change (rule 5): a `modify` body that changes the value and then
/// throws keeps the change, and every observer of the variable sees it once.
@Suite("Changes that stay")
struct VariableChangeTests {
  private struct Failure: Error {}

  /// Changes `variable` to `newValue` inside `modify`, then throws.
  private static func changeThenThrow<Value>(_ variable: Variable<Value>, to newValue: Value) {
    #expect(throws: Failure.self) {
      try variable.modify { value in
        value = newValue
        throw Failure()
      }
    }
  }

  @Test("inv5: a modify body that changes a one-word value and throws delivers the change once")
  func inv5_throwingModifyDeliversTheChange_word() {
    let variable = Variable(1)
    let seen = Recorder<Int>()
    let observation = variable.signal.observe { seen.append($0) }
    Self.changeThenThrow(variable, to: 2)
    #expect(variable.value == 2)
    #expect(seen.values == [1, 2])
    let late = Recorder<Int>()
    variable.signal.observe { late.append($0) }
    #expect(late.values == [2], "a new observer starts where the old ones are")
    observation.dispose()
  }

  @Test("inv5: a modify body that changes a locked value and throws delivers the change once")
  func inv5_throwingModifyDeliversTheChange_locked() {
    let variable = Variable("a")
    let seen = Recorder<String>()
    let observation = variable.signal.observe { seen.append($0) }
    Self.changeThenThrow(variable, to: "b")
    #expect(variable.value == "b")
    #expect(seen.values == ["a", "b"])
    observation.dispose()
  }

  @Test("inv5: a throwing modify body tells Observation once, and the observers agree with it")
  func inv5_throwingModifyTellsObservationAndObserversAlike() {
    let word = Variable(1)
    let locked = Variable([1])
    let seenWord = Recorder<Int>()
    let seenLocked = Recorder<[Int]>()
    word.signal.observe { seenWord.append($0) }
    locked.signal.observe { seenLocked.append($0) }
    let changes = Counter()
    withObservationTracking({ _ = (word.value, locked.value) }, onChange: { changes.increment() })
    Self.changeThenThrow(word, to: 5)
    #expect(changes.value == 1)
    withObservationTracking({ _ = locked.value }, onChange: { changes.increment() })
    Self.changeThenThrow(locked, to: [7])
    #expect(changes.value == 2)
    #expect(seenWord.values == [1, 5])
    #expect(seenLocked.values == [[1], [7]])
  }

  @Test("inv5: values yields a throwing modify body's change")
  func inv5_throwingModifyReachesValues() async {
    let variable = Variable("a")
    var iterator = variable.values.makeAsyncIterator()
    #expect(await iterator.next() == "a")
    Self.changeThenThrow(variable, to: "b")
    variable.value = "c"
    #expect(await iterator.next() == "b", "the change was skipped")
  }
}
