import Foundation

/// Writes a value as the Swift expression that makes it again, read through `Mirror`: an
/// action as `.rename(id: 3, title: "Milk")`, for the `"swift"` field of a log
/// (``ActionLog/Fields/swift``), which a test generated from the log (``SessionTest``) dispatches.
///
/// What it writes: whole numbers and `Bool`s as literals; `Double` and `Float` as literals, or
/// `.infinity`, `-.infinity`, `.nan`; strings and characters as string literals, every character
/// that is not visible (a control, a format or a separator character) escaped as `\u{…}`; an
/// optional as its value or `nil`; arrays as array literals; sets and dictionaries as literals
/// sorted by how their elements are written; tuples; an enum case as `.case` at the top and as
/// `Type.case` inside (with its values, and their labels); a struct as a call of its memberwise
/// initializer, `Item(id: 1, title: "Milk")`; `UUID`, `Date`, `URL` and `Data` as calls of their
/// Foundation initializers.
///
/// What it refuses, with the reason: a class (an object has an identity a literal cannot make),
/// a function, a type from a standard library other than those above, a type declared inside a
/// function or `private` (no test can name it), a struct with a stored property whose name
/// begins with `_` (a property wrapper's storage), and a case without values of an enum that
/// describes itself (its description, not its case, is what `Mirror` gives).
///
/// Types are written without their module (`Item`, `Outer.Inner`) and without generic
/// arguments (`Box(value: 1)`, which Swift infers): the test imports the module of the state.
enum SwiftLiteral {
  /// Why a value cannot be written as Swift.
  struct Refusal: Error {
    let reason: String
  }

  /// How deep a value may nest: deeper is refused rather than recursed into.
  static let depthLimit = 64

  /// The action `value`, as an expression whose type the context gives: `.add(title: "Milk")`.
  static func action(_ value: Any) throws(Refusal) -> String {
    try expression(value, depth: 0, isTop: true)
  }

  /// Whether `expression` uses a Foundation type's initializer, and so needs Foundation.
  static func needsFoundation(_ expression: String) -> Bool {
    foundationInitializers.contains { expression.contains($0) }
  }

  private static let foundationInitializers = [
    "UUID(uuidString:", "Date(timeIntervalSince1970:", "URL(string:", "Data(base64Encoded:",
  ]

  private static func expression(_ value: Any, depth: Int, isTop: Bool = false) throws(Refusal) -> String {
    guard depth < depthLimit else { throw Refusal(reason: "it nests more than \(depthLimit) values deep") }
    if let scalar = try scalar(value) { return scalar }
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .optional:
      guard let wrapped = mirror.children.first?.value else { return "nil" }
      return try expression(wrapped, depth: depth + 1)
    case .collection:
      return try "["
        + mirror.children.map { child throws(Refusal) in try expression(child.value, depth: depth + 1) }
        .joined(separator: ", ") + "]"
    case .set:
      let elements = try mirror.children.map { child throws(Refusal) in try expression(child.value, depth: depth + 1) }
      return "[" + elements.sorted().joined(separator: ", ") + "]"
    case .dictionary:
      var pairs: [String] = []
      for child in mirror.children {
        let pair = Mirror(reflecting: child.value).children.map(\.value)
        guard pair.count == 2 else { throw Refusal(reason: "a dictionary's element is not a key and a value") }
        pairs.append(try expression(pair[0], depth: depth + 1) + ": " + expression(pair[1], depth: depth + 1))
      }
      return pairs.isEmpty ? "[:]" : "[" + pairs.sorted().joined(separator: ", ") + "]"
    case .tuple:
      return try "(" + arguments(mirror, depth: depth) + ")"
    case .enum:
      return try enumCase(value, mirror: mirror, depth: depth, isTop: isTop)
    case .struct:
      let type = try typeName(mirror.subjectType)
      if let module = module(of: mirror.subjectType), standardModules.contains(module) {
        throw Refusal(reason: "a \(type) of \(module) has no literal")
      }
      if let hidden = mirror.children.first(where: { $0.label?.hasPrefix("_") ?? false })?.label {
        throw Refusal(reason: "\(type) stores \(hidden), which its memberwise initializer does not take")
      }
      return try type + "(" + arguments(mirror, depth: depth) + ")"
    case .class:
      throw Refusal(reason: "a \(String(describing: mirror.subjectType)) is a class: an object has no literal")
    default:
      throw Refusal(reason: "a \(String(describing: mirror.subjectType)) has no literal")
    }
  }

  /// The values of a tuple or a struct, with their labels, separated by commas.
  private static func arguments(_ mirror: Mirror, depth: Int) throws(Refusal) -> String {
    try mirror.children.map { child throws(Refusal) in
      let value = try expression(child.value, depth: depth + 1)
      // A tuple's unlabelled elements are named `.0`, `.1`…
      guard let label = child.label, !label.hasPrefix(".") else { return value }
      return "\(label): \(value)"
    }.joined(separator: ", ")
  }

  private static func enumCase(_ value: Any, mirror: Mirror, depth: Int, isTop: Bool) throws(Refusal) -> String {
    let prefix = isTop ? "" : try typeName(mirror.subjectType)
    guard let payload = mirror.children.first, let name = payload.label else {
      // A case without values: its name is what Swift prints, unless the type prints itself.
      if value is CustomStringConvertible || value is CustomDebugStringConvertible || value is TextOutputStreamable {
        throw Refusal(
          reason: "\(String(describing: mirror.subjectType)) describes itself, so its cases without values have no name"
        )
      }
      let name = String(describing: value)
      guard isIdentifier(name) else { throw Refusal(reason: "the case \(name) is not a name Swift can write") }
      return prefix + "." + name
    }
    let values = Mirror(reflecting: payload.value)
    let inside =
      values.displayStyle == .tuple
      ? try arguments(values, depth: depth + 1) : try expression(payload.value, depth: depth + 1)
    return prefix + "." + name + "(" + inside + ")"
  }

  /// A value of a type that is written as a literal or a known initializer; `nil` for others.
  private static func scalar(_ value: Any) throws(Refusal) -> String? {
    switch value {
    case let value as Bool: return value ? "true" : "false"
    case let value as Int: return String(value)
    case let value as Int8: return String(value)
    case let value as Int16: return String(value)
    case let value as Int32: return String(value)
    case let value as Int64: return String(value)
    case let value as UInt: return String(value)
    case let value as UInt8: return String(value)
    case let value as UInt16: return String(value)
    case let value as UInt32: return String(value)
    case let value as UInt64: return String(value)
    case let value as Double: return floatingPoint(value)
    case let value as Float: return floatingPoint(value)
    case let value as String: return string(value)
    case let value as Substring: return string(String(value))
    case let value as Character: return string(String(value))
    case let value as UUID: return "UUID(uuidString: \"\(value.uuidString)\")!"
    case let value as Date:
      return "Date(timeIntervalSince1970: \(floatingPoint(value.timeIntervalSince1970)))"
    case let value as URL: return "URL(string: \(string(value.absoluteString)))!"
    case let value as Data: return "Data(base64Encoded: \"\(value.base64EncodedString())\")!"
    default: return nil
    }
  }

  private static func floatingPoint<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Value) -> String {
    if value.isNaN { return ".nan" }
    if value.isInfinite { return value < 0 ? "-.infinity" : ".infinity" }
    // `description` reads back as the same value: `0.1`, `1e+20`, `5e-324`.
    return value.description
  }

  /// `text` as a Swift string literal: `"`, `\` and every character that does not show
  /// escaped, the rest as it is.
  static func string(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": literal += "\\\""
      case "\\": literal += "\\\\"
      case "\n": literal += "\\n"
      case "\r": literal += "\\r"
      case "\t": literal += "\\t"
      case "\0": literal += "\\0"
      default:
        literal += isShown(scalar) ? String(scalar) : "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      }
    }
    return literal + "\""
  }

  /// Whether `scalar` shows as itself: not a control, a format character (a direction mark, a
  /// zero-width joiner), a line or paragraph separator, or unassigned.
  static func isShown(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate: false
    default: scalar == " " || !scalar.properties.isWhitespace
    }
  }

  /// The modules whose types have no literal here, but for those ``scalar(_:)`` writes.
  private static let standardModules: Set<String> = [
    "Swift", "Foundation", "FoundationEssentials", "FoundationInternationalization", "_Concurrency", "Dispatch",
    "CoreFoundation", "ObjectiveC",
  ]

  /// The module of `type`: the first part of its full name.
  static func module(of type: Any.Type) -> String? {
    let full = String(reflecting: type)
    return full.firstIndex(of: ".").map { String(full[..<$0]) }
  }

  /// The module of a full type name, `todo` of `todo.TodoListState`, if it is a name.
  static func module(ofName full: String) -> String? {
    guard let dot = full.firstIndex(of: ".") else { return nil }
    let module = String(full[..<dot])
    return isIdentifier(module) ? module : nil
  }

  /// `type` as a test that imports its module names it: without the module, nor generic
  /// arguments. Refused when the type has no name outside its file or function.
  static func typeName(_ type: Any.Type) throws(Refusal) -> String {
    let full = String(reflecting: type)
    guard let name = swiftName(full) else {
      throw Refusal(reason: "\(String(describing: type)) is private, or declared in a function: a test cannot name it")
    }
    return name
  }

  /// A full type name (`todo.Outer.Inner<Swift.Int>`) without its module and generic arguments
  /// (`Outer.Inner`); `nil` when a part of it is not a name (`(unknown context at $…)`).
  static func swiftName(_ full: String) -> String? {
    var depth = 0
    var base = ""
    for character in full {
      if character == "<" { depth += 1 }
      if depth == 0 { base.append(character) }
      if character == ">" { depth -= 1 }
    }
    let parts = base.split(separator: ".", omittingEmptySubsequences: false).dropFirst()
    guard !parts.isEmpty, parts.allSatisfy({ isIdentifier(String($0)) }) else { return nil }
    return parts.joined(separator: ".")
  }

  /// Whether `text` is a Swift identifier of ASCII letters, digits and `_`, not starting with a
  /// digit.
  static func isIdentifier(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return text.unicodeScalars.allSatisfy {
      $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
    }
  }
}
