import FluxReactive
import Testing

/// `Mirror` shows a variable or a constant as its value, not as how it keeps it.
@Suite("Variable reflection")
struct VariableReflectionTests {
  @Test("Mirror shows a Variable as its current value only, nothing of its lock or observers")
  func variableMirrorsItsValue() {
    let variable = Variable(3)
    let observation = variable.signal.observe { _ in }
    variable.value = 4
    let mirror = Mirror(reflecting: variable)
    #expect(mirror.displayStyle == .class)
    #expect(mirror.children.map(\.label) == ["value"])
    #expect(mirror.children.first?.value as? Int == 4)
    observation.dispose()
  }

  @Test("Mirror shows a Constant as its current value, that of the variable it views")
  func constantMirrorsItsValue() {
    let variable = Variable("a")
    let constant = variable.constant
    variable.value = "b"
    let mirror = Mirror(reflecting: constant)
    #expect(mirror.displayStyle == .struct)
    #expect(mirror.children.map(\.label) == ["value"])
    #expect(mirror.children.first?.value as? String == "b")
  }
}
