import Foundation

/// Reads a line of the log as JSON exactly as RFC 8259 writes it, and as the page reads it: so
/// that the server and the page read every line the same way (rule 21).
///
/// `Recording` reads only the fields of the log, and lets through, in the values it does not
/// read, what JSON does not allow: a comma before `]` or `}`, `01`, `1.`, `1e`, `\x41`, a tab
/// or a NUL byte inside a string. The page reads every value, strictly, and would show such a
/// line as a bad one while the server counted it as an action. Here a line is JSON when it is
/// one value, with white space only of space, tab, line feed and carriage return, strings with
/// no control character and only JSON's escapes, numbers as `-?(0|[1-9][0-9]*)(.[0-9]+)?
/// ([eE][+-]?[0-9]+)?`, and `true`, `false`, `null`; and when every object writes each key
/// once.
///
/// Keys are compared as Swift compares strings, unit by unit of UTF-16 after their escapes are
/// read and both are put in Unicode's composed form (`"st\u0061te"` is `"state"`, and `"é"` is
/// `"e"` with a combining accent): JavaScript keeps both of two such keys, a Swift dictionary
/// one, so a line whose meaning depends on its reader is an error for both. The line is read
/// in one pass with a stack of its own, never by recursion, however deep it nests.
enum StrictJSON {
  /// The deepest nesting read, as `Recording` and the page allow.
  static let depthLimit = 512

  /// What makes `bytes`, UTF-8 text, other than one JSON value whose objects write each key
  /// once: the first place where it is not JSON (`not JSON: a bad escape at character 12`,
  /// counted in UTF-16 units from 1, as the page counts), or the first key that an object
  /// writes twice; `nil` when there is none.
  static func problem(in bytes: ArraySlice<UInt8>) -> String? {
    func read(_ buffer: UnsafeBufferPointer<UInt8>) -> Problem? {
      var reader = Reader(buffer)
      return reader.problem()
    }
    let found = bytes.withContiguousStorageIfAvailable(read) ?? Array(bytes).withUnsafeBufferPointer(read)
    switch found {
    case nil: return nil
    case .notJSON(let what, let offset)?:
      let character = String(decoding: bytes.prefix(offset), as: UTF8.self).utf16.count + 1
      return "not JSON: \(what) at character \(character)"
    case .repeatedKey(let key, let path)?:
      let place = path.isEmpty ? "" : ", in \"\(path)\""
      return "the key \"\(key)\" is written twice\(place)"
    case .tooDeep?:
      return "the line nests arrays and objects more than \(depthLimit) deep"
    }
  }

  /// The first problem of a line.
  private enum Problem {
    case notJSON(String, offset: Int)
    case repeatedKey(String, path: String)
    case tooDeep
  }

  /// An object or an array being read.
  private struct Frame {
    let isObject: Bool
    /// In an object, its keys so far, in the form they are compared in, and the last key.
    var keys: Set<[UInt16]> = []
    var key: [UInt16] = []
    /// In an array, the index of the element being read.
    var index = 0
  }

  private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    var frames: [Frame] = []
    /// The text of the last key read.
    var text: [UInt16] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
      self.bytes = bytes
    }

    /// The byte at `at`, or `nil` past the end.
    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func space() {
      while at < bytes.count {
        switch bytes[at] {
        case 0x20, 0x09, 0x0A, 0x0D: at += 1
        default: return
        }
      }
    }

    /// Reads the line; in the order of the page's reader, so that both find the same problem first.
    mutating func problem() -> Problem? {
      while true {
        space()
        switch current {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
          guard frames.count < StrictJSON.depthLimit else { return .tooDeep }
          let isObject = current == UInt8(ascii: "{")
          at += 1
          frames.append(Frame(isObject: isObject))
          space()
          if current == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
            at += 1
            frames.removeLast()
          } else {
            if isObject, let problem = key() { return problem }
            continue
          }
        case UInt8(ascii: "\""):
          if let problem = string(keepingText: false) { return problem }
        case UInt8(ascii: "t"): if let problem = literal("true") { return problem }
        case UInt8(ascii: "f"): if let problem = literal("false") { return problem }
        case UInt8(ascii: "n"): if let problem = literal("null") { return problem }
        default:
          if !number() {
            return .notJSON(at >= bytes.count ? "the line ends early" : "an unexpected character", offset: at)
          }
        }
        // The value ends here, and each array or object that it ends too.
        while true {
          guard !frames.isEmpty else {
            space()
            return at < bytes.count ? .notJSON("text after the end", offset: at) : nil
          }
          let isObject = frames[frames.count - 1].isObject
          space()
          if current == UInt8(ascii: ",") {
            at += 1
            if isObject {
              if let problem = key() { return problem }
            } else {
              frames[frames.count - 1].index += 1
            }
            break
          }
          guard current == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
            return .notJSON(isObject ? "no comma or } after a value" : "no comma or ] after a value", offset: at)
          }
          at += 1
          frames.removeLast()
        }
      }
    }

    /// Reads a key of the innermost object, and its colon.
    private mutating func key() -> Problem? {
      space()
      guard current == UInt8(ascii: "\"") else { return .notJSON("a key that is not a string", offset: at) }
      if let problem = string(keepingText: true) { return problem }
      let units = text
      space()
      guard current == UInt8(ascii: ":") else { return .notJSON("no colon after a key", offset: at) }
      at += 1
      let compared = Self.composed(units)
      guard frames[frames.count - 1].keys.insert(compared).inserted else {
        return .repeatedKey(String(decoding: units, as: UTF16.self), path: place)
      }
      frames[frames.count - 1].key = units
      return nil
    }

    /// Reads a string from its opening quote to its closing one; keeps its text in ``text``, as
    /// units of UTF-16, when `keepingText` is true.
    private mutating func string(keepingText: Bool) -> Problem? {
      at += 1
      text.removeAll(keepingCapacity: true)
      var start = at
      while true {
        guard let byte = current else { return .notJSON("a string that does not end", offset: at) }
        switch byte {
        case UInt8(ascii: "\""):
          if keepingText { keep(start..<at) }
          at += 1
          return nil
        case 0..<0x20:
          return .notJSON("a control character in a string", offset: at)
        case UInt8(ascii: "\\"):
          if keepingText { keep(start..<at) }
          let escaped = at + 1 < bytes.count ? bytes[at + 1] : 0
          if escaped == UInt8(ascii: "u") {
            guard at + 6 <= bytes.count else { return .notJSON("a bad \\u escape", offset: at) }
            var value: UInt16 = 0
            for digit in bytes[(at + 2)..<(at + 6)] {
              guard let nibble = Self.hexValue(digit) else { return .notJSON("a bad \\u escape", offset: at) }
              value = value << 4 | nibble
            }
            if keepingText { text.append(value) }
            at += 6
          } else {
            guard let unit = Self.escapes[escaped] else { return .notJSON("a bad escape", offset: at) }
            if keepingText { text.append(unit) }
            at += 2
          }
          start = at
        default:
          at += 1
        }
      }
    }

    /// Adds the bytes of `range`, UTF-8 text with no escape, to ``text``.
    private mutating func keep(_ range: Range<Int>) {
      guard !range.isEmpty else { return }
      text += String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self).utf16
    }

    private mutating func literal(_ word: StaticString) -> Problem? {
      let count = word.utf8CodeUnitCount
      guard at + count <= bytes.count,
        UnsafeBufferPointer(rebasing: bytes[at..<(at + count)]).elementsEqual(
          UnsafeBufferPointer(start: word.utf8Start, count: count))
      else { return .notJSON(at >= bytes.count ? "the line ends early" : "an unexpected character", offset: at) }
      at += count
      return nil
    }

    /// Reads a number as JSON writes it, or returns `false` and reads nothing.
    private mutating func number() -> Bool {
      var end = at
      func digits() -> Int {
        let start = end
        while end < bytes.count, (0x30...0x39).contains(bytes[end]) { end += 1 }
        return end - start
      }
      if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
      guard end < bytes.count, (0x30...0x39).contains(bytes[end]) else { return false }
      if bytes[end] == UInt8(ascii: "0") { end += 1 } else { _ = digits() }
      if end + 1 < bytes.count, bytes[end] == UInt8(ascii: "."), (0x30...0x39).contains(bytes[end + 1]) {
        end += 1
        _ = digits()
      }
      if end < bytes.count, bytes[end] | 0x20 == UInt8(ascii: "e") {
        var exponent = end + 1
        if exponent < bytes.count, bytes[exponent] == UInt8(ascii: "+") || bytes[exponent] == UInt8(ascii: "-") {
          exponent += 1
        }
        if exponent < bytes.count, (0x30...0x39).contains(bytes[exponent]) {
          end = exponent
          _ = digits()
        }
      }
      at = end
      return true
    }

    /// Where the innermost object is in the line, as a path (`state.items[1]`).
    private var place: String {
      var path = ""
      for frame in frames.dropLast() {
        path += frame.isObject ? "." + String(decoding: frame.key, as: UTF16.self) : "[\(frame.index)]"
      }
      return path.hasPrefix(".") ? String(path.dropFirst()) : path
    }

    private static let escapes: [UInt8: UInt16] = [
      UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F, UInt8(ascii: "b"): 0x08,
      UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
    ]

    private static func hexValue(_ byte: UInt8) -> UInt16? {
      switch byte {
      case 0x30...0x39: UInt16(byte - 0x30)
      case 0x41...0x46: UInt16(byte - 0x41 + 10)
      case 0x61...0x66: UInt16(byte - 0x61 + 10)
      default: nil
      }
    }

    /// A key in the form keys are compared in: its units in Unicode's composed form (NFC), as
    /// the page compares them. A lone surrogate, which no normal form changes, stays as it is,
    /// and the text on either side of it is composed on its own.
    private static func composed(_ units: [UInt16]) -> [UInt16] {
      guard units.contains(where: { $0 >= 0x80 }) else { return units }
      var out: [UInt16] = []
      var run: [UInt16] = []
      func flush() {
        guard !run.isEmpty else { return }
        out += String(decoding: run, as: UTF16.self).precomposedStringWithCanonicalMapping.utf16
        run.removeAll(keepingCapacity: true)
      }
      var index = 0
      while index < units.count {
        let unit = units[index]
        let isHigh = (0xD800...0xDBFF).contains(unit)
        if isHigh, index + 1 < units.count, (0xDC00...0xDFFF).contains(units[index + 1]) {
          run += [unit, units[index + 1]]
          index += 2
          continue
        }
        if isHigh || (0xDC00...0xDFFF).contains(unit) {
          flush()
          out.append(unit)
        } else {
          run.append(unit)
        }
        index += 1
      }
      flush()
      return out
    }
  }
}
