/// Code laid out on lines as `swift format` leaves it.
///
/// What fits on its line stays on it. A call that does not breaks after its `(` and fills the
/// lines after it with its arguments, indented by two more spaces; an argument that does not fit
/// on a line of its own is broken in turn, and the next one starts a new line; `)` follows the
/// last argument, or goes on a line of its own when it would not fit there. A collection that
/// does not fit breaks after its `[`, fills its lines with its elements, puts a comma after the
/// last if it has more than one, and ends with `]` on a line of its own. `label: value` whose
/// value is text too long for its line breaks after the `:`, the value indented by two more.
///
/// `swift format` keeps the line breaks it finds where it may break a line, and adds some only
/// where a line is too long: code laid out here, at a width no wider than the formatter's, is
/// code it leaves as it is (the tests run it on what ``SessionTest`` writes).
indirect enum SwiftLayout {
  /// Text that stays on one line.
  case text(String)
  /// `label: value`, or `key: value` in a dictionary: `prefix` is `label:`.
  case labeled(prefix: String, value: SwiftLayout)
  /// `head` (which ends in `(` or `[`), the items separated by commas, and `close`.
  case group(head: String, items: [SwiftLayout], close: String, isCollection: Bool)
  /// A multi-line raw string literal, `#"""`, its lines, `"""#`: always on lines of its own.
  case multilineString(lines: [String])

  /// The layout of a value.
  static func of(_ expression: SwiftExpression) -> SwiftLayout {
    switch expression {
    case .literal(let text):
      return .text(text)
    case .member(let type, let name, let arguments):
      let head = (type ?? "") + "." + name
      guard let arguments else { return .text(head) }
      return .group(head: head + "(", items: arguments.map(of), close: ")", isCollection: false)
    case .initializer(let type, let arguments, let isForced):
      return .group(head: type + "(", items: arguments.map(of), close: isForced ? ")!" : ")", isCollection: false)
    case .array(let elements):
      return .group(head: "[", items: elements.map { of($0) }, close: "]", isCollection: true)
    case .dictionary(let pairs):
      guard !pairs.isEmpty else { return .text("[:]") }
      // A key is a literal, in practice; a key that is not is kept on one line.
      let items = pairs.map { SwiftLayout.labeled(prefix: flat(of($0.key)) + ":", value: of($0.value)) }
      return .group(head: "[", items: items, close: "]", isCollection: true)
    case .tuple(let elements):
      return .group(head: "(", items: elements.map(of), close: ")", isCollection: false)
    }
  }

  private static func of(_ argument: SwiftExpression.Argument) -> SwiftLayout {
    guard let label = argument.label else { return of(argument.value) }
    return .labeled(prefix: label + ":", value: of(argument.value))
  }

  /// The `#`s around a raw string of `lines`: one more than any run of them after a `\` or a
  /// `"` in the text, so that nothing in it reads as an escape, an interpolation or its end.
  static func rawDelimiter(for lines: [String]) -> String {
    var longest = 0
    for line in lines {
      var run: Int?
      // By scalars, as the compiler reads them: a `"` with a combining mark after it is a `"`.
      for scalar in line.unicodeScalars {
        if scalar == "#", let count = run {
          run = count + 1
          longest = max(longest, count + 1)
        } else {
          run = scalar == "\\" || scalar == "\"" ? 0 : nil
        }
      }
    }
    return String(repeating: "#", count: longest + 1)
  }

  /// A raw string literal of one line.
  static func rawString(_ text: String) -> String {
    let pounds = rawDelimiter(for: [text])
    return pounds + "\"" + text + "\"" + pounds
  }

  /// The layout on one line; a multi-line string never is.
  static func flat(_ layout: SwiftLayout) -> String {
    switch layout {
    case .text(let text): text
    case .labeled(let prefix, let value): prefix + " " + flat(value)
    case .group(let head, let items, let close, _): head + items.map(flat).joined(separator: ", ") + close
    case .multilineString(let lines): lines.joined(separator: " ")
    }
  }

  private var isMultiline: Bool {
    switch self {
    case .text: false
    case .labeled(_, let value): value.isMultiline
    case .group(_, let items, _, _): items.contains(where: \.isMultiline)
    case .multilineString: true
    }
  }

  /// The lines of this layout, the first of them after `start` characters of its line (an
  /// indentation, and what precedes it there), each of the others indented, `indent` being the
  /// indentation of the line it starts on; `end` characters follow its last line.
  func lines(start: Int, indent: Int, end: Int, width: Int) -> [String] {
    let flat = Self.flat(self)
    if !isMultiline && start + flat.count + end <= width { return [flat] }
    let pad = String(repeating: " ", count: indent)
    switch self {
    case .text(let text):
      return [text]
    case .multilineString(let lines):
      let inner = String(repeating: " ", count: indent + 2)
      let pounds = Self.rawDelimiter(for: lines)
      return [pounds + "\"\"\""] + lines.map { $0.isEmpty ? "" : inner + $0 } + [inner + "\"\"\"" + pounds]
    case .labeled(let prefix, let value):
      if case .text(let text) = value {
        // Too long after its label: on a line of its own, indented by two more.
        return [prefix, String(repeating: " ", count: indent + 2) + text]
      }
      let valueLines = value.lines(start: start + prefix.count + 1, indent: indent, end: end, width: width)
      return [prefix + " " + valueLines[0]] + valueLines.dropFirst()
    case .group(let head, let items, let close, let isCollection):
      return groupLines(
        head: head, items: items, close: close, isCollection: isCollection, indent: indent, end: end, width: width,
        pad: pad)
    }
  }

  private func groupLines(
    head: String, items: [SwiftLayout], close: String, isCollection: Bool, indent: Int, end: Int, width: Int,
    pad: String
  ) -> [String] {
    var lines = [head]
    let inner = indent + 2
    let innerPad = String(repeating: " ", count: inner)
    // Collections of more than one element end with a comma after the last.
    let lastComma = isCollection && items.count > 1 ? "," : ""
    var line = ""
    for (index, item) in items.enumerated() {
      let isLast = index == items.count - 1
      let comma = isLast ? lastComma : ","
      let after = comma.count + (isLast && !isCollection ? close.count + end : 0)
      let itemFlat = Self.flat(item)
      if !line.isEmpty, !item.isMultiline, inner + line.count + 2 + itemFlat.count + after <= width {
        line += ", " + itemFlat
        continue
      }
      if !line.isEmpty { lines.append(innerPad + line + ",") }
      let itemLines = item.lines(start: inner, indent: inner, end: after, width: width)
      line = ""
      if itemLines.count == 1 {
        line = itemLines[0]
      } else {
        // What follows a broken item starts a line of its own.
        lines.append(innerPad + itemLines[0])
        lines += itemLines.dropFirst()
        lines[lines.count - 1] += comma
      }
    }
    if !line.isEmpty { lines.append(innerPad + line + lastComma) }
    if isCollection {
      lines.append(pad + close)
    } else if lines.count > 1, lines[lines.count - 1].count + close.count + end <= width {
      lines[lines.count - 1] += close
    } else {
      // `)` does not fit after the last argument: on a line of its own.
      lines.append(pad + close)
    }
    return lines
  }
}
