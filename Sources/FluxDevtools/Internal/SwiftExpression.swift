/// A Swift expression as ``SwiftLiteral`` writes one (the `"swift"` of a log line), read back and
/// checked before ``SessionTest`` writes it into a test: a log comes from elsewhere, and a test
/// runs what it holds.
///
/// Only what ``SwiftLiteral`` writes reads: literals (numbers, strings, `true`, `false`, `nil`,
/// `.infinity`, `-.infinity`, `.nan`), enum cases (`.name`, `Type.name`, with values), calls of
/// initializers (`Type(label: value)`), arrays, dictionaries and tuples, and the four Foundation
/// initializers it writes, `UUID(uuidString:)`, `Date(timeIntervalSince1970:)`, `URL(string:)`
/// and `Data(base64Encoded:)`. No closure, no operator but a minus sign, no method or property
/// of a value, no string interpolation: nothing a test would run but the making of a value.
indirect enum SwiftExpression: Equatable {
  /// A literal, as written.
  case literal(String)
  /// `.name`, `Type.name`, with values if the case has some.
  case member(type: String?, name: String, arguments: [Argument]?)
  /// `Type(arguments)`, with `!` after it when `isForced`.
  case initializer(type: String, arguments: [Argument], isForced: Bool)
  case array([SwiftExpression])
  case dictionary([Pair])
  case tuple([Argument])

  /// A value with its label, if it has one.
  struct Argument: Equatable {
    let label: String?
    let value: SwiftExpression
  }

  /// A key and its value.
  struct Pair: Equatable {
    let key: SwiftExpression
    let value: SwiftExpression
  }

  /// Why a text is not an expression a test may hold.
  struct Failure: Error {
    let message: String
  }

  /// How deep an expression may nest.
  static let depthLimit = 100

  /// Reads `text`, all of it.
  static func parse(_ text: String) throws(Failure) -> SwiftExpression {
    var parser = Parser(text)
    let expression = try parser.expression(depth: 0)
    parser.skipSpaces()
    guard parser.isAtEnd else { throw parser.failure("more after the expression") }
    return expression
  }

  /// The Foundation initializers that ``SwiftLiteral`` writes, with the label of their one value
  /// and whether they are forced: no other Foundation type may be made.
  static let foundationInitializers: [String: (label: String, isForced: Bool)] = [
    "UUID": ("uuidString", true), "Date": ("timeIntervalSince1970", false), "URL": ("string", true),
    "Data": ("base64Encoded", true),
  ]

  /// Types a test may not make from a log, whatever their values: they reach files, processes
  /// and the network.
  static let forbiddenTypes: Set<String> = [
    "FileHandle", "FileManager", "Process", "Thread", "URLSession", "InputStream", "OutputStream", "Stream",
    "Pipe", "Timer", "NotificationCenter", "UserDefaults", "Bundle", "String", "Array", "Dictionary", "Set",
    "Optional", "Result", "Task", "DispatchQueue", "DispatchSource", "ProcessInfo", "PropertyListSerialization",
    "JSONSerialization", "XMLParser", "NSData", "NSString", "NSURL", "NSArray", "NSDictionary",
  ]

  /// Modules whose names a log may not write before a type or a member: `Foundation.system(…)`
  /// is a call of a C function, not a value. ``SwiftLiteral`` writes types without their module.
  static let moduleNames: Set<String> = [
    "Swift", "Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking",
    "FoundationXML", "CoreFoundation", "Glibc", "SwiftGlibc", "Musl", "Darwin", "WinSDK", "Android", "Bionic",
    "WASILibc", "SwiftShims", "Dispatch", "ObjectiveC", "Testing", "XCTest", "Synchronization", "Observation",
    "Distributed", "RegexBuilder", "Cxx", "CxxStdlib", "System", "SystemPackage", "FluxCore", "FluxReactive",
    "FluxTesting", "FluxDevtools",
  ]

  /// Standard types whose values ``SwiftLiteral`` writes as literals (and `UUID`, `Date`, `URL`
  /// and `Data` as their one initializer each): a log names them for nothing else, and their
  /// static members and other initializers make what a log did not record (`Bool.random()`,
  /// `Date.now`, `Int(…)` of a call).
  static let literalTypes: Set<String> = [
    "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "Int128", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
    "UInt128", "Double", "Float", "Float16", "Float80", "CGFloat", "Decimal", "Character", "Substring", "Unicode",
    "StaticString", "UUID", "Date", "URL", "Data",
  ]

  /// Why `type`, a type as a log names it (`Item`, `Outer.Inner`), may not be made from a log;
  /// `nil` when it may: one of its parts is a forbidden type, or it begins with a module's name.
  static func refusal(ofType type: String) -> String? {
    let parts = type.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    if let first = parts.first, moduleNames.contains(first) {
      return "\(type) names the module \(first): a log names its types without their module"
    }
    if let part = parts.first(where: { forbiddenTypes.contains($0) || $0.hasPrefix("NS") }) {
      return "a \(part) is not made from a log"
    }
    return nil
  }

  /// The first part of each type it names (`Outer` of `Outer.Inner(…)`): what a declaration of
  /// the same name around it would hide.
  var typeNames: Set<String> {
    func first(_ type: String) -> String { String(type.prefix { $0 != "." }) }
    switch self {
    case .literal: return []
    case .member(let type, _, let arguments):
      return (arguments ?? []).reduce(into: Set(type.map { [first($0)] } ?? [])) { $0.formUnion($1.value.typeNames) }
    case .initializer(let type, let arguments, _):
      return arguments.reduce(into: [first(type)]) { $0.formUnion($1.value.typeNames) }
    case .array(let elements): return elements.reduce(into: []) { $0.formUnion($1.typeNames) }
    case .dictionary(let pairs):
      return pairs.reduce(into: []) { $0.formUnion($1.key.typeNames.union($1.value.typeNames)) }
    case .tuple(let elements): return elements.reduce(into: []) { $0.formUnion($1.value.typeNames) }
    }
  }

  /// Whether a Foundation initializer is used, so that the test imports Foundation.
  var needsFoundation: Bool {
    switch self {
    case .literal: false
    case .member(_, _, let arguments): arguments?.contains { $0.value.needsFoundation } ?? false
    case .initializer(let type, let arguments, _):
      Self.foundationInitializers[type] != nil || arguments.contains { $0.value.needsFoundation }
    case .array(let elements): elements.contains(where: \.needsFoundation)
    case .dictionary(let pairs): pairs.contains { $0.key.needsFoundation || $0.value.needsFoundation }
    case .tuple(let elements): elements.contains { $0.value.needsFoundation }
    }
  }
}

// MARK: Reading

extension SwiftExpression {
  fileprivate struct Parser {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ text: String) {
      scalars = Array(text.unicodeScalars)
    }

    var isAtEnd: Bool { position == scalars.count }

    private var next: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    func failure(_ message: String) -> Failure {
      Failure(message: "\(message), at character \(position + 1)")
    }

    mutating func skipSpaces() {
      while next == " " { position += 1 }
    }

    private mutating func take(_ scalar: Unicode.Scalar) -> Bool {
      skipSpaces()
      guard next == scalar else { return false }
      position += 1
      return true
    }

    private mutating func expect(_ scalar: Unicode.Scalar) throws(Failure) {
      guard take(scalar) else { throw failure("expected \"\(scalar)\"") }
    }

    mutating func expression(depth: Int) throws(Failure) -> SwiftExpression {
      guard depth < SwiftExpression.depthLimit else {
        throw failure("nested more than \(SwiftExpression.depthLimit) deep")
      }
      skipSpaces()
      guard let first = next else { throw failure("an expression is missing") }
      switch first {
      case "\"":
        return .literal(SwiftLiteral.string(try string()))
      case "-", "0"..."9":
        return .literal(try number())
      case ".":
        position += 1
        let name = try identifier()
        if ["infinity", "nan"].contains(name) { return .literal("." + name) }
        try check(member: name)
        return .member(type: nil, name: name, arguments: try arguments(depth: depth))
      case "[":
        return try collection(depth: depth)
      case "(":
        position += 1
        let elements = try argumentList(depth: depth)
        guard elements.count > 1 || elements.first?.label != nil else { throw failure("a tuple of one value") }
        return .tuple(elements)
      default:
        return try named(depth: depth)
      }
    }

    /// `true`, `false`, `nil`, `Type.case…`, `Type(…)`, `Type(…)!`.
    private mutating func named(depth: Int) throws(Failure) -> SwiftExpression {
      var parts = [try identifier()]
      if parts == ["true"] || parts == ["false"] || parts == ["nil"] { return .literal(parts[0]) }
      while take(".") { parts.append(try identifier()) }
      let last = parts[parts.count - 1]
      if parts.count > 1, last.first?.isLowercase == true {
        let type = parts.dropLast().joined(separator: ".")
        try check(type: type)
        if SwiftExpression.literalTypes.contains(parts[0]) {
          throw failure("\(type).\(last) is not a value a log writes")
        }
        try check(member: last)
        return .member(type: type, name: last, arguments: try arguments(depth: depth))
      }
      let type = parts.joined(separator: ".")
      guard let arguments = try arguments(depth: depth) else { throw failure("\(type) is not called") }
      let isForced = take("!")
      try check(type: type)
      if let foundation = SwiftExpression.foundationInitializers[type] {
        guard arguments.count == 1, arguments[0].label == foundation.label, case .literal = arguments[0].value,
          isForced == foundation.isForced
        else { throw failure("\(type) is made only as SwiftLiteral writes it") }
      } else if isForced {
        throw failure("\(type)(…)! is not a value a log writes")
      } else if SwiftExpression.literalTypes.contains(parts[0]) {
        throw failure("\(type)(…) is not a value a log writes: it writes a literal")
      }
      return .initializer(type: type, arguments: arguments, isForced: isForced)
    }

    private func check(type: String) throws(Failure) {
      // Every part a type's: a lowercase one is a static property, `Item.shared.Reset()` a call on its value.
      guard type.split(separator: ".").allSatisfy({ $0.first?.isUppercase == true }) else {
        throw failure("\(type) is not a type")
      }
      if let refusal = SwiftExpression.refusal(ofType: type) { throw failure(refusal) }
    }

    /// A case is named as itself: `.init(…)` calls an initializer of a type the log does not name
    /// (`.init(repeating: "a", count: …)` of a `String`), and `.self` is not a value.
    private func check(member name: String) throws(Failure) {
      if name == "init" || name == "self" { throw failure(".\(name) is not a case a log writes") }
    }

    /// `(…)` after a name, if there is one.
    private mutating func arguments(depth: Int) throws(Failure) -> [Argument]? {
      guard take("(") else { return nil }
      return try argumentList(depth: depth)
    }

    /// The values up to `)`, with their labels.
    private mutating func argumentList(depth: Int) throws(Failure) -> [Argument] {
      var list: [Argument] = []
      if take(")") { return list }
      repeat {
        skipSpaces()
        let start = position
        var label: String?
        if let name = try? identifier(), take(":") {
          label = name
        } else {
          position = start
        }
        list.append(Argument(label: label, value: try expression(depth: depth + 1)))
      } while take(",")
      try expect(")")
      return list
    }

    /// `[]`, `[:]`, `[a, b]`, `[k: v]`.
    private mutating func collection(depth: Int) throws(Failure) -> SwiftExpression {
      position += 1
      if take("]") { return .array([]) }
      if take(":") {
        try expect("]")
        return .dictionary([])
      }
      let first = try expression(depth: depth + 1)
      if take(":") {
        var pairs = [Pair(key: first, value: try expression(depth: depth + 1))]
        while take(",") {
          let key = try expression(depth: depth + 1)
          try expect(":")
          pairs.append(Pair(key: key, value: try expression(depth: depth + 1)))
        }
        try expect("]")
        return .dictionary(pairs)
      }
      var elements = [first]
      while take(",") { elements.append(try expression(depth: depth + 1)) }
      try expect("]")
      return .array(elements)
    }

    /// An identifier of ASCII letters, digits and `_`.
    private mutating func identifier() throws(Failure) -> String {
      skipSpaces()
      let start = position
      while let scalar = next, scalar.isASCII,
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
      {
        position += 1
      }
      let name = String(String.UnicodeScalarView(scalars[start..<position]))
      guard SwiftLiteral.isIdentifier(name) else { throw failure("expected a name") }
      return name
    }

    /// `-.infinity`, or a whole or decimal number: `-12`, `0.5`, `1e+20`.
    private mutating func number() throws(Failure) -> String {
      let start = position
      if next == "-" {
        position += 1
        if next == "." {
          position += 1
          guard try identifier() == "infinity" else { throw failure("expected a number") }
          return "-.infinity"
        }
      }
      func digits() -> Int {
        let from = position
        while let scalar = next, ("0"..."9").contains(scalar) { position += 1 }
        return position - from
      }
      guard digits() > 0 else { throw failure("expected a number") }
      if next == ".", position + 1 < scalars.count, ("0"..."9").contains(scalars[position + 1]) {
        position += 1
        _ = digits()
      }
      if next == "e" || next == "E" {
        position += 1
        if next == "+" || next == "-" { position += 1 }
        guard digits() > 0 else { throw failure("expected the digits of an exponent") }
      }
      let text = String(String.UnicodeScalarView(scalars[start..<position]))
      // Bounded as what a log writes: a 64-bit integer, or a finite `Double`.
      let isWhole = !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
      let isBounded =
        isWhole ? (Int64(text) != nil || UInt64(text) != nil) : Double(text).map { $0.isFinite } ?? false
      guard isBounded else { throw failure("\(text.prefix(40)) is not a number a log writes") }
      return text
    }

    /// A string literal with the escapes ``SwiftLiteral/string(_:)`` writes: its characters.
    private mutating func string() throws(Failure) -> String {
      position += 1
      var text = String.UnicodeScalarView()
      while true {
        guard let scalar = next else { throw failure("a string does not end") }
        position += 1
        switch scalar {
        case "\"":
          return String(text)
        case "\\":
          guard let escaped = next else { throw failure("a string does not end") }
          position += 1
          switch escaped {
          case "\"", "\\", "'": text.append(escaped)
          case "n": text.append("\n")
          case "r": text.append("\r")
          case "t": text.append("\t")
          case "0": text.append("\0")
          case "u":
            guard next == "{" else { throw failure("expected { after \\u") }
            position += 1
            var hex = ""
            while let digit = next, digit != "}", hex.count <= 8 {
              hex.unicodeScalars.append(digit)
              position += 1
            }
            guard next == "}", let value = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(value) else {
              throw failure("\\u{\(hex)} is not a character")
            }
            position += 1
            text.append(decoded)
          default:
            throw failure("\\\(escaped) is not an escape a log writes")
          }
        case "\n", "\r":
          throw failure("a line break in a string")
        default:
          text.append(scalar)
        }
      }
    }
  }
}
