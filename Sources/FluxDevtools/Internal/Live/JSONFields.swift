/// The keys of a JSON object on one line, each with the bytes of its value: how the live
/// connection reads a message from the inspector, and the few fields of a log line it needs.
///
/// Everything it reads may be hostile: the text is checked as UTF-8 and as JSON in one pass, with
/// a stack of its own (never by recursion, however deep the text nests, and no deeper than
/// ``depthLimit``); a key written twice at the top is an error; each value is kept as the bytes
/// that wrote it, and read only when asked for, with its range checked.
struct JSONFields {
  /// The text the fields are read from.
  let bytes: ArraySlice<UInt8>
  /// Each key at the top, with the range of its value in ``bytes``.
  let fields: [String: Range<Int>]

  /// The deepest nesting of arrays and objects read, as deep as the JSON decoder reads.
  static let depthLimit = 512
  /// The largest whole number read: exact in a JavaScript page's numbers (2^53 − 1).
  static let largestNumber: UInt64 = 9_007_199_254_740_991

  /// Reads `bytes`, one line without its line break (a `\r` before it is dropped), as an object.
  ///
  /// - Throws: A ``JSONFieldsError`` that says what is wrong, in words.
  init(_ bytes: ArraySlice<UInt8>) throws(JSONFieldsError) {
    let content = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
    guard UTF8Check.isValid(content) else { throw JSONFieldsError("the text is not UTF-8") }
    var scanner = JSONScanner(content)
    self.bytes = content
    self.fields = try scanner.topLevelObject()
  }

  /// The bytes of the value at `key`, if there is one.
  func raw(_ key: String) -> ArraySlice<UInt8>? {
    fields[key].map { bytes[$0] }
  }

  /// The text at `key`, if it is a string of at most `limit` bytes.
  func string(_ key: String, limit: Int = 4096) -> String? {
    guard let value = raw(key), value.count <= limit * 6 + 2, let text = JSONScanner.string(value),
      text.utf8.count <= limit
    else { return nil }
    return text
  }

  /// The whole number at `key`, if it is one from 0 to ``largestNumber``, written in decimal digits
  /// (no sign, fraction or exponent).
  func wholeNumber(_ key: String) -> Int? {
    raw(key).flatMap(JSONScanner.wholeNumber)
  }

  /// The Boolean at `key`, if it is `true` or `false`.
  func bool(_ key: String) -> Bool? {
    guard let value = raw(key) else { return nil }
    if value.elementsEqual("true".utf8) { return true }
    if value.elementsEqual("false".utf8) { return false }
    return nil
  }

  /// Whether the object has `key`, whatever its value.
  func has(_ key: String) -> Bool {
    fields[key] != nil
  }
}

/// What is wrong with a line that was to be a JSON object, in words.
struct JSONFieldsError: Error, Sendable, Equatable {
  let message: String

  init(_ message: String) {
    self.message = message
  }
}

/// A reader of JSON text that checks it in one pass, with a stack of its own.
struct JSONScanner {
  private let bytes: ArraySlice<UInt8>
  private var at: Int

  init(_ bytes: ArraySlice<UInt8>) {
    self.bytes = bytes
    at = bytes.startIndex
  }

  private var byte: UInt8? { at < bytes.endIndex ? bytes[at] : nil }

  private func fail(_ what: String) -> JSONFieldsError {
    JSONFieldsError("the text is not JSON: \(what) at byte \(at - bytes.startIndex + 1)")
  }

  private mutating func space() {
    while let byte, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { at += 1 }
  }

  private mutating func expect(_ character: UInt8, _ what: String) throws(JSONFieldsError) {
    space()
    guard byte == character else { throw fail(what) }
    at += 1
  }

  /// Reads the text as one object, and returns each of its keys with the range of its value.
  mutating func topLevelObject() throws(JSONFieldsError) -> [String: Range<Int>] {
    try expect(UInt8(ascii: "{"), "not an object")
    var fields: [String: Range<Int>] = [:]
    space()
    if byte == UInt8(ascii: "}") {
      at += 1
    } else {
      while true {
        space()
        guard byte == UInt8(ascii: "\"") else { throw fail("a key that is not a string") }
        let start = at
        try skipString()
        guard let key = Self.string(bytes[start..<at]) else { throw fail("a key that cannot be read") }
        try expect(UInt8(ascii: ":"), "no colon after a key")
        space()
        let valueStart = at
        try skipValue()
        guard fields[key] == nil else { throw JSONFieldsError("the key \"\(key.prefix(64))\" is written twice") }
        fields[key] = valueStart..<at
        space()
        if byte == UInt8(ascii: ",") {
          at += 1
          continue
        }
        try expect(UInt8(ascii: "}"), "no comma or } after a value")
        break
      }
    }
    space()
    guard at == bytes.endIndex else { throw fail("text after the end") }
    return fields
  }

  /// Reads the text as one array, and returns the range of each of its elements.
  mutating func arrayElements() throws(JSONFieldsError) -> [Range<Int>] {
    try expect(UInt8(ascii: "["), "not an array")
    var elements: [Range<Int>] = []
    space()
    if byte == UInt8(ascii: "]") {
      at += 1
    } else {
      while true {
        space()
        let start = at
        try skipValue()
        elements.append(start..<at)
        space()
        if byte == UInt8(ascii: ",") {
          at += 1
          continue
        }
        try expect(UInt8(ascii: "]"), "no comma or ] after a value")
        break
      }
    }
    space()
    guard at == bytes.endIndex else { throw fail("text after the end") }
    return elements
  }

  /// Skips one value: a scalar, or an array or object with all it holds.
  private mutating func skipValue() throws(JSONFieldsError) {
    // Each open container: `true` for an object.
    var stack: [Bool] = []
    while true {
      space()
      guard let first = byte else { throw fail("the text ends early") }
      switch first {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        guard stack.count < JSONFields.depthLimit else {
          throw JSONFieldsError("arrays and objects nest more than \(JSONFields.depthLimit) deep")
        }
        at += 1
        space()
        let isObject = first == UInt8(ascii: "{")
        if byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
          at += 1
        } else {
          stack.append(isObject)
          if isObject { try skipKey() }
          continue
        }
      case UInt8(ascii: "\""): try skipString()
      case UInt8(ascii: "t"): try skipWord("true")
      case UInt8(ascii: "f"): try skipWord("false")
      case UInt8(ascii: "n"): try skipWord("null")
      default: try skipNumber()
      }
      // A value ended: so does each container that it closes.
      while let isObject = stack.last {
        space()
        if byte == UInt8(ascii: ",") {
          at += 1
          if isObject { try skipKey() }
          break
        }
        guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
          throw fail(isObject ? "no comma or } after a value" : "no comma or ] after a value")
        }
        at += 1
        stack.removeLast()
      }
      if stack.isEmpty { return }
    }
  }

  private mutating func skipKey() throws(JSONFieldsError) {
    space()
    guard byte == UInt8(ascii: "\"") else { throw fail("a key that is not a string") }
    try skipString()
    try expect(UInt8(ascii: ":"), "no colon after a key")
  }

  private mutating func skipWord(_ word: StaticString) throws(JSONFieldsError) {
    for index in 0..<word.utf8CodeUnitCount {
      guard byte == word.utf8Start[index] else { throw fail("an unexpected character") }
      at += 1
    }
  }

  /// Skips a string from its opening quote to its closing one, checking its escapes.
  private mutating func skipString() throws(JSONFieldsError) {
    at += 1
    while let current = byte {
      at += 1
      switch current {
      case UInt8(ascii: "\""): return
      case UInt8(ascii: "\\"):
        guard let escaped = byte else { throw fail("a string that does not end") }
        at += 1
        switch escaped {
        case UInt8(ascii: "u"):
          for _ in 0..<4 {
            guard let digit = byte, JSONScanner.hexValue(digit) != nil else { throw fail("a bad \\u escape") }
            at += 1
          }
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
          UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          break
        default: throw fail("a bad escape")
        }
      case 0..<0x20: throw fail("a control character in a string")
      default: break
      }
    }
    throw fail("a string that does not end")
  }

  /// Skips a number as JSON writes it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
  private mutating func skipNumber() throws(JSONFieldsError) {
    let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
    func digits() throws(JSONFieldsError) {
      guard let first = byte, digit.contains(first) else { throw fail("an unexpected character") }
      while let next = byte, digit.contains(next) { at += 1 }
    }
    if byte == UInt8(ascii: "-") { at += 1 }
    if byte == UInt8(ascii: "0") { at += 1 } else { try digits() }
    if byte == UInt8(ascii: ".") {
      at += 1
      try digits()
    }
    if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
      at += 1
      if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { at += 1 }
      try digits()
    }
  }

  static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }

  /// The text of `bytes`, a JSON string with its quotes (already checked by the scanner, or not),
  /// or `nil` when it is not one.
  static func string(_ bytes: ArraySlice<UInt8>) -> String? {
    guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
    let inner = bytes.dropFirst().dropLast()
    guard inner.contains(UInt8(ascii: "\\")) || inner.contains(UInt8(ascii: "\"")) else {
      guard UTF8Check.isValid(inner), !inner.contains(where: { $0 < 0x20 }) else { return nil }
      return String(decoding: inner, as: UTF8.self)
    }
    var scalars = String.UnicodeScalarView()
    var text: [UInt8] = []
    func flush() -> Bool {
      guard !text.isEmpty else { return true }
      guard UTF8Check.isValid(text[...]) else { return false }
      scalars.append(contentsOf: String(decoding: text, as: UTF8.self).unicodeScalars)
      text.removeAll(keepingCapacity: true)
      return true
    }
    var index = inner.startIndex
    func hex4() -> UInt32? {
      guard inner.endIndex - index >= 4 else { return nil }
      var value: UInt32 = 0
      for offset in 0..<4 {
        guard let digit = hexValue(inner[index + offset]) else { return nil }
        value = value << 4 | digit
      }
      index += 4
      return value
    }
    while index < inner.endIndex {
      let byte = inner[index]
      index += 1
      if byte == UInt8(ascii: "\"") || byte < 0x20 { return nil }
      guard byte == UInt8(ascii: "\\") else {
        text.append(byte)
        continue
      }
      guard index < inner.endIndex else { return nil }
      let escaped = inner[index]
      index += 1
      let simple: UInt8?
      switch escaped {
      case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
      case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
      case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
      case UInt8(ascii: "b"): simple = 0x08
      case UInt8(ascii: "f"): simple = 0x0C
      case UInt8(ascii: "n"): simple = 0x0A
      case UInt8(ascii: "r"): simple = 0x0D
      case UInt8(ascii: "t"): simple = 0x09
      case UInt8(ascii: "u"): simple = nil
      default: return nil
      }
      if let simple {
        text.append(simple)
        continue
      }
      guard let unit = hex4(), flush() else { return nil }
      var value = unit
      if (0xD800...0xDBFF).contains(unit) {
        // A high surrogate: a low one must follow, written as an escape too.
        guard inner.endIndex - index >= 6, inner[index] == UInt8(ascii: "\\"), inner[index + 1] == UInt8(ascii: "u")
        else { return nil }
        index += 2
        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
        value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
      } else if (0xDC00...0xDFFF).contains(unit) {
        return nil
      }
      guard let scalar = Unicode.Scalar(value) else { return nil }
      scalars.append(scalar)
    }
    guard flush() else { return nil }
    return String(scalars)
  }

  /// The whole number written in `bytes`, if it is one from 0 to ``JSONFields/largestNumber`` in
  /// decimal digits, with no sign, fraction, exponent or leading zero.
  static func wholeNumber(_ bytes: ArraySlice<UInt8>) -> Int? {
    guard (1...16).contains(bytes.count), bytes.first != UInt8(ascii: "0") || bytes.count == 1 else { return nil }
    var value: UInt64 = 0
    for byte in bytes {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
      // Sixteen digits at most: no overflow of 64 bits.
      value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
    }
    guard value <= JSONFields.largestNumber else { return nil }
    return Int(value)
  }

  /// The range of each element of `bytes`, a JSON array; `nil` when it is not one.
  static func elements(ofArray bytes: ArraySlice<UInt8>) -> [Range<Int>]? {
    var scanner = JSONScanner(bytes)
    return try? scanner.arrayElements()
  }
}

/// A check that bytes are UTF-8 as the standard defines it: no overlong forms, no surrogates,
/// nothing past U+10FFFF.
enum UTF8Check {
  static func isValid(_ bytes: ArraySlice<UInt8>) -> Bool {
    var index = bytes.startIndex
    let end = bytes.endIndex
    while index < end {
      let lead = bytes[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      let length: Int
      var lower: UInt8 = 0x80
      var upper: UInt8 = 0xBF
      switch lead {
      case 0xC2...0xDF: length = 2
      case 0xE0:
        length = 3
        lower = 0xA0
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED:
        length = 3
        upper = 0x9F
      case 0xF0:
        length = 4
        lower = 0x90
      case 0xF1...0xF3: length = 4
      case 0xF4:
        length = 4
        upper = 0x8F
      default: return false
      }
      guard end - index >= length else { return false }
      let second = bytes[index + 1]
      guard second >= lower && second <= upper else { return false }
      for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[index + offset]) {
        return false
      }
      index += length
    }
    return true
  }
}

/// JSON text written by hand, for the messages of the live connection.
enum JSONText {
  /// `text` as a JSON string, with its quotes: `"`, `\` and the control characters escaped.
  static func string(_ text: String) -> String {
    var result = "\""
    result.reserveCapacity(text.utf8.count + 2)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case "\u{2028}": result += "\\u2028"
      case "\u{2029}": result += "\\u2029"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }
}
