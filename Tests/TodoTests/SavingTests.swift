import Testing

@testable import todo

@Suite("The state of saving")
struct SavingTests {
  @Test("each step of a save appends the list it wrote in place, never copying the lists written before it")
  func eachStepAppendsInPlace() {
    var status = SaveStatus()
    status.apply(.begin(file: "todo.md", total: 2_000))
    var kept = 0
    var address = status.written.withUnsafeBufferPointer { $0.baseAddress }
    for index in 1...2_000 {
      status.apply(.wrote(list: "List \(index)"))
      let now = status.written.withUnsafeBufferPointer { $0.baseAddress }
      if now == address { kept += 1 }
      address = now
    }
    #expect(status.written.count == 2_000 && status.written.last == "List 2000")
    // The buffer moves only when it grows, about twenty times, never on every step.
    #expect(kept > 1_900)
    status.apply(.finish)
    #expect(status.phase == .saved)
  }

  @Test("a step that comes when no save is under way changes nothing")
  func stepOutsideASave() {
    var status = SaveStatus()
    status.apply(.wrote(list: "Inbox"))
    status.apply(.finish)
    #expect(status == SaveStatus())
  }
}
