import Foundation

/// A JSON value read back, to compare two states as values (not as text: `1` and `1.0` are one
/// number, and the order of an object's keys does not count) and to show one, keys sorted, as a
/// person reads it. For session tests: ``SessionTest`` writes a recorded state with it, and the
/// test kit compares a store's state with it.
package enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  case integer(Int64)
  case unsigned(UInt64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// Reads `text`: a JSON value, nested at most as deep as ``Recording`` reads a line.
  ///
  /// - Throws: A message in words when the text is not JSON, or nests deeper.
  package static func parse(_ text: String) throws(JSONValue.Failure) -> JSONValue {
    let data = Data(text.utf8)
    guard Nesting(data).deepest <= Nesting.limit else {
      throw Failure(message: "it nests arrays and objects more than \(Nesting.limit) deep")
    }
    do {
      return try JSONDecoder().decode(JSONValue.self, from: data)
    } catch {
      throw Failure(message: RecordingError.describe(error))
    }
  }

  /// Why a text is not a JSON value.
  package struct Failure: Error, Sendable {
    package let message: String
  }

  package static func == (left: JSONValue, right: JSONValue) -> Bool {
    switch (left, right) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a == b
    case (.integer(let a), .integer(let b)): a == b
    case (.unsigned(let a), .unsigned(let b)): a == b
    case (.integer(let a), .unsigned(let b)), (.unsigned(let b), .integer(let a)): a >= 0 && UInt64(a) == b
    default:
      // A number written with a fraction or an exponent on one side: compared as `Double`s.
      if let a = left.number, let b = right.number { a == b } else { false }
    }
  }

  private var number: Double? {
    switch self {
    case .integer(let value): Double(value)
    case .unsigned(let value): Double(value)
    case .double(let value): value
    default: nil
    }
  }
}

extension JSONValue: Decodable {
  package init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .integer(value)
    } else if let value = try? container.decode(UInt64.self) {
      self = .unsigned(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }
}

extension JSONValue {
  /// The value on one line: `{"id": 1, "title": "Milk"}`, keys sorted.
  package var compact: String {
    switch self {
    case .null: "null"
    case .bool(let value): value ? "true" : "false"
    case .integer(let value): String(value)
    case .unsigned(let value): String(value)
    case .double(let value): value.description
    case .string(let value): Self.quoted(value)
    case .array(let values): "[" + values.map(\.compact).joined(separator: ", ") + "]"
    case .object(let members):
      "{" + members.keys.sorted().map { Self.quoted($0) + ": " + members[$0]!.compact }.joined(separator: ", ") + "}"
    }
  }

  /// The value on lines of at most `width` characters where it can be: an array or an object
  /// that fits on the rest of its line stays on it; one that does not has a line per element,
  /// indented by two spaces.
  ///
  /// With `breakingTop`, the outermost array or object has a line per element even when it fits
  /// on one: two values laid out so line up element by element, for a diff.
  package func lines(width: Int, breakingTop: Bool = false) -> [String] {
    var lines: [String] = []
    append(to: &lines, indent: 0, prefix: "", suffix: "", width: width, breaking: breakingTop)
    return lines
  }

  private func append(
    to lines: inout [String], indent: Int, prefix: String, suffix: String, width: Int, breaking: Bool = false
  ) {
    let pad = String(repeating: " ", count: indent)
    let flat = compact
    let elements: [(key: String?, value: JSONValue)]
    let (open, close): (String, String)
    switch self {
    case .array(let values) where !values.isEmpty:
      elements = values.map { (nil, $0) }
      (open, close) = ("[", "]")
    case .object(let members) where !members.isEmpty:
      elements = members.keys.sorted().map { ($0, members[$0]!) }
      (open, close) = ("{", "}")
    default:
      lines.append(pad + prefix + flat + suffix)
      return
    }
    if !breaking && indent + prefix.count + flat.count + suffix.count <= width {
      lines.append(pad + prefix + flat + suffix)
      return
    }
    lines.append(pad + prefix + open)
    for (index, element) in elements.enumerated() {
      let key = element.key.map { Self.quoted($0) + ": " } ?? ""
      element.value.append(
        to: &lines, indent: indent + 2, prefix: key, suffix: index == elements.count - 1 ? "" : ",", width: width)
    }
    lines.append(pad + close + suffix)
  }

  /// `text` as a JSON string: `"`, `\` and the control characters escaped as JSON escapes them,
  /// and every character that does not show (``SwiftLiteral/isShown(_:)``) as `\u` and its code.
  package static func quoted(_ text: String) -> String {
    var quoted = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": quoted += "\\\""
      case "\\": quoted += "\\\\"
      case "\n": quoted += "\\n"
      case "\r": quoted += "\\r"
      case "\t": quoted += "\\t"
      default:
        if SwiftLiteral.isShown(scalar) {
          quoted.unicodeScalars.append(scalar)
        } else {
          for unit in String(scalar).utf16 {
            let hex = String(unit, radix: 16)
            quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
          }
        }
      }
    }
    return quoted + "\""
  }
}
