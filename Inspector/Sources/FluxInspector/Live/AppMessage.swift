import Foundation

/// One message of the live protocol: a JSON object on one line, read one level deep.
///
/// Every message from an app is hostile (rule 21): the line is checked as JSON in one pass with a
/// stack of its own (never by recursion, however deep it nests, and no deeper than 512), a key
/// written twice at the top is an error, and each value is kept as the bytes that wrote it, read
/// only when asked for, with its range checked. The `line` of a `line` message goes to the page
/// as those bytes, checked as a line of a log file is (see ``LogLines``), so that the server and
/// the page read it the same way.
struct AppMessage {
  /// The message's `type`.
  let type: String
  /// Each key at the top, with the bytes of its value.
  let fields: [String: ArraySlice<UInt8>]

  /// The deepest nesting of arrays and objects read, as the page and the log's reader allow.
  static let depthLimit = 512
  /// The largest number read from a message: exact in the page's numbers (2^53 − 1).
  static let largestNumber: UInt64 = 9_007_199_254_740_991

  /// Reads `bytes`, one line without its line break, as a message.
  ///
  /// - Throws: An ``InspectorError`` that says what is wrong, in words, when the line is not UTF-8
  ///   text, not a JSON object, or has no `type` that is text.
  init(_ bytes: ArraySlice<UInt8>) throws(InspectorError) {
    let content = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
    guard String(validating: content, as: UTF8.self) != nil else {
      throw InspectorError("a message is not UTF-8 text")
    }
    var reader = JSONScanner(content)
    fields = try reader.topLevelObject()
    guard let typeBytes = fields["type"] else { throw InspectorError("a message has no \"type\"") }
    guard let type = JSONScanner.string(typeBytes), type.utf8.count <= 64 else {
      throw InspectorError("a message's \"type\" is not a short text")
    }
    self.type = type
  }

  /// The text at `key`, if it is a string of at most `limit` bytes.
  func string(_ key: String, limit: Int = 256) -> String? {
    guard let bytes = fields[key], bytes.count <= limit * 6 + 2, let text = JSONScanner.string(bytes),
      text.utf8.count <= limit
    else { return nil }
    return text
  }

  /// The whole number at `key`, if it is one from 0 to ``largestNumber``, written in decimal
  /// digits (no sign, fraction or exponent).
  func number(_ key: String) -> Int? {
    guard let bytes = fields[key], (1...16).contains(bytes.count),
      bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
      bytes.first != UInt8(ascii: "0") || bytes.count == 1,
      let value = UInt64(String(decoding: bytes, as: UTF8.self)), value <= Self.largestNumber
    else { return nil }
    return Int(value)
  }

  /// The Boolean at `key`, if it is `true` or `false`.
  func bool(_ key: String) -> Bool? {
    switch fields[key].map({ Array($0) }) {
    case Array("true".utf8): true
    case Array("false".utf8): false
    default: nil
    }
  }

  /// The value at `key` as Foundation reads JSON, if there is one.
  func value(_ key: String) -> Any? {
    guard let bytes = fields[key] else { return nil }
    return try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
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

  private func fail(_ what: String) -> InspectorError {
    InspectorError("a message is not JSON: \(what) at byte \(at - bytes.startIndex + 1)")
  }

  private mutating func space() {
    while let byte, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { at += 1 }
  }

  private mutating func expect(_ character: UInt8, _ what: String) throws(InspectorError) {
    space()
    guard byte == character else { throw fail(what) }
    at += 1
  }

  /// Reads the text as one object, and returns each of its keys with the bytes of its value.
  mutating func topLevelObject() throws(InspectorError) -> [String: ArraySlice<UInt8>] {
    try expect(UInt8(ascii: "{"), "not an object")
    var fields: [String: ArraySlice<UInt8>] = [:]
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
        guard fields[key] == nil else { throw InspectorError("a message writes the key \"\(key)\" twice") }
        fields[key] = bytes[valueStart..<at]
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

  /// Reads the text as one array, and returns the bytes of each of its elements.
  mutating func arrayElements() throws(InspectorError) -> [ArraySlice<UInt8>] {
    try expect(UInt8(ascii: "["), "not an array")
    var elements: [ArraySlice<UInt8>] = []
    space()
    if byte == UInt8(ascii: "]") {
      at += 1
    } else {
      while true {
        space()
        let start = at
        try skipValue()
        elements.append(bytes[start..<at])
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
  private mutating func skipValue() throws(InspectorError) {
    // Each open container: `true` for an object.
    var stack: [Bool] = []
    while true {
      space()
      guard let first = byte else { throw fail("the line ends early") }
      switch first {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        guard stack.count < AppMessage.depthLimit else {
          throw InspectorError("a message nests arrays and objects more than \(AppMessage.depthLimit) deep")
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

  private mutating func skipKey() throws(InspectorError) {
    space()
    guard byte == UInt8(ascii: "\"") else { throw fail("a key that is not a string") }
    try skipString()
    try expect(UInt8(ascii: ":"), "no colon after a key")
  }

  private mutating func skipWord(_ word: String) throws(InspectorError) {
    for expected in word.utf8 {
      guard byte == expected else { throw fail("an unexpected character") }
      at += 1
    }
  }

  /// Skips a string from its opening quote to its closing one, checking its escapes.
  private mutating func skipString() throws(InspectorError) {
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
            guard let digit = byte, Self.isHexDigit(digit) else { throw fail("a bad \\u escape") }
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
  private mutating func skipNumber() throws(InspectorError) {
    let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
    func digits() throws(InspectorError) {
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

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }

  /// The text of `bytes`, a JSON string with its quotes, or `nil` when it is not one.
  static func string(_ bytes: ArraySlice<UInt8>) -> String? {
    guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
    let inner = bytes.dropFirst().dropLast()
    if !inner.contains(UInt8(ascii: "\\")) && !inner.contains(where: { $0 < 0x20 }) {
      return String(validating: inner, as: UTF8.self)
    }
    return (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) as? String
  }

  /// Whether `bytes` are one JSON value and nothing else, nested at most 512 deep.
  static func isValue(_ bytes: ArraySlice<UInt8>) -> Bool {
    var scanner = JSONScanner(bytes)
    do {
      try scanner.skipValue()
      scanner.space()
      return scanner.at == bytes.endIndex
    } catch {
      return false
    }
  }
}
