import Foundation

/// The text of a ``SessionTest``: a header that says where the session comes from, the imports,
/// and a suite with one test per store, laid out as `swift format` leaves it (``SwiftLayout``).
struct SessionFile {
  /// What the header says of the session.
  struct Session {
    let source: String
    let name: String
    let from: Date
    let to: Date
    let actions: Int
    let stores: Int
    let cutShortLine: Int?
    let checks: SessionTest.StateChecks
  }

  let session: Session
  let plans: [StorePlan]
  let leftOut: [SessionTest.Problem]

  /// The width `swift format` formats to by default.
  static let width = 100

  var text: String {
    var lines = header
    lines.append("")
    var imports = ["import FluxTesting", "import Testing"]
    if plans.contains(where: { $0.steps.contains { $0.action.needsFoundation } }) {
      imports.append("import Foundation")
    }
    lines += imports.sorted()
    lines.append("")
    lines += Set(plans.map(\.module)).sorted().map { "@testable import \($0)" }
    lines.append("")
    lines.append("@Suite(\(SwiftLiteral.string("The session of " + Self.shown(session.source))))")
    lines.append("struct \(session.name) {")
    var names: Set<String> = []
    for (index, plan) in plans.enumerated() {
      if index > 0 { lines.append("") }
      lines += test(plan, name: Self.functionName(plan.label, taken: &names))
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  // MARK: Header

  private var header: [String] {
    let checked =
      session.checks == .afterEveryAction
      ? "and its state after each action against the state the log recorded there."
      : "and its state after its last action against the state the log recorded there."
    var sentences = [
      "Source: \(Self.shown(session.source)).",
      "Recorded from \(LogTime.string(from: session.from)) to \(LogTime.string(from: session.to)): "
        + "\(Self.count(session.actions, "action")) of \(Self.count(session.stores, "store")).",
    ]
    if let line = session.cutShortLine { sentences.append("Its line \(line) was cut short and is left out.") }
    sentences.append(
      "Each test makes one store as its session began (SessionTestable), dispatches its actions in the order of "
        + "the log, and checks what the store committed, what middleware cancelled, " + checked)
    for problem in leftOut {
      sentences.append("Left out: \(Self.shown(problem.description)).")
    }
    sentences.append("The test runs what the log holds: read it as code from wherever the log came from.")
    var lines = [SessionTest.marker + ": regenerate this file rather than edit it."]
    for sentence in sentences { lines += Self.comment(sentence, indent: 0) }
    return lines
  }

  /// `text` as `//` comment lines of at most ``width`` characters, broken at spaces.
  static func comment(_ text: String, indent: Int) -> [String] {
    let pad = String(repeating: " ", count: indent) + "// "
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ") {
      if !line.isEmpty, pad.count + line.count + 1 + word.count > width {
        lines.append(pad + line)
        line = ""
      }
      line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(pad + line) }
    return lines
  }

  /// `text` with every character that does not show, a line break among them, as `\u{…}`: a
  /// comment holds text from the log, and ends at a line break.
  static func shown(_ text: String) -> String {
    let literal = SwiftLiteral.string(text)
    return String(literal.dropFirst().dropLast())
  }

  private static func count(_ number: Int, _ noun: String) -> String {
    number == 1 ? "1 \(noun)" : "\(number) \(noun)s"
  }

  // MARK: Tests

  /// The name of the test function of `label`: its letters and digits, in lower camel case
  /// (`list:Groceries` is `listGroceries`), made unique among `taken`.
  static func functionName(_ label: String, taken: inout Set<String>) -> String {
    let words = label.unicodeScalars.split { !($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
      .map { String(String.UnicodeScalarView($0)) }
    var name = words.enumerated().map { index, word in
      index == 0 ? word.prefix(1).lowercased() + word.dropFirst() : word.prefix(1).uppercased() + word.dropFirst()
    }.joined()
    if name.isEmpty || !SwiftLiteral.isIdentifier(name) || keywords.contains(name) {
      name = "store" + name.prefix(1).uppercased() + name.dropFirst()
    }
    var unique = name
    var number = 2
    while taken.contains(unique) {
      unique = name + String(number)
      number += 1
    }
    taken.insert(unique)
    return unique
  }

  private static let keywords: Set<String> = [
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
    "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
    "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do", "else",
    "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as", "false",
    "is", "nil", "self", "super", "throws", "true", "try", "await", "async", "any", "some", "consume", "borrowing",
    "consuming", "copy", "discard", "each", "macro", "package",
  ]

  private func test(_ plan: StorePlan, name: String) -> [String] {
    let indent = 4
    var lines = ["  @Test(\(SwiftLiteral.string(plan.label)))", "  func \(name)() async {"]
    var arguments: [SwiftLayout] = [
      .labeled(prefix: "session:", value: .text(SwiftLiteral.string(plan.label))),
      .labeled(prefix: "mutations:", value: .text(".init()")),
    ]
    if !plan.middlewares.isEmpty {
      let list = plan.middlewares.map { SwiftLayout.text("AnyMiddleware(\($0)())") }
      arguments.append(
        .labeled(prefix: "middlewares:", value: .group(head: "[", items: list, close: "]", isCollection: true)))
    }
    let tester = SwiftLayout.group(
      head: "let tester = StoreTester<\(plan.stateType)>(", items: arguments, close: ")", isCollection: false)
    lines += Self.indented(tester.lines(start: indent, indent: indent, end: 0, width: Self.width), by: indent)
    for step in plan.steps {
      for note in step.notes { lines += Self.comment(note, indent: indent) }
      lines += Self.indented(dispatch(step, indent: indent), by: indent)
    }
    lines.append("    tester.finish()")
    lines.append("  }")
    return lines
  }

  /// `await tester.dispatch(…)` of one step, or `await tester.restore(…)`.
  private func dispatch(_ step: StorePlan.Step, indent: Int) -> [String] {
    let action = SwiftLayout.of(step.action)
    var items = step.isRestore ? [] : [action]
    if step.outcome == .cancelled {
      items.append(.labeled(prefix: "committed:", value: .text("[]")))
      items.append(
        .labeled(prefix: "cancelled:", value: .group(head: "[", items: [action], close: "]", isCollection: true)))
    }
    items.append(.labeled(prefix: "sessionLine:", value: .text(String(step.line))))
    if let recorded = step.recorded {
      let compact = SwiftLayout.rawString(recorded.compact)
      // On one line if it fits on a line of the call's arguments, its `)` after it.
      if indent + 2 + "recorded: ".count + compact.count + 1 <= Self.width {
        items.append(.labeled(prefix: "recorded:", value: .text(compact)))
      } else {
        let lines = recorded.lines(width: Self.width - indent - 4)
        items.append(.labeled(prefix: "recorded:", value: .multilineString(lines: lines)))
      }
    }
    let head = step.isRestore ? "await tester.restore(" : "await tester.dispatch("
    let call = SwiftLayout.group(head: head, items: items, close: ")", isCollection: false)
    return call.lines(start: indent, indent: indent, end: 0, width: Self.width)
  }

  /// The first of `lines` indented by `indent` spaces; the others are already.
  private static func indented(_ lines: [String], by indent: Int) -> [String] {
    guard let first = lines.first else { return [] }
    return [String(repeating: " ", count: indent) + first] + lines.dropFirst()
  }
}
