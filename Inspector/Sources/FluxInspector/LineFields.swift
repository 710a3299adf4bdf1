/// The fields of one log line that the index of a long log keeps, read in one pass over its bytes
/// without building the line's values: its store, outcome, action case, sequence and dispatch id,
/// whether it has a state and holds, and where in the line the text that a search looks through
/// is.
///
/// The reader walks the top level of a JSON object and skips each value by counting brackets
/// outside strings: no recursion, however deep the line nests (rule 21), and no value is built
/// but the few short strings it keeps. A line it cannot read as an object with `store`, `time`,
/// `outcome` and `action` is a bad line. It does not check the line whole: the row served for a
/// line is checked as ``LogLines`` checks it, which may still find it bad (a key written twice,
/// say).
struct LineFields {
  var store = ""
  var outcome = ""
  /// The action's case, as the page names it: the one key of an object, a string, `[…]`, or the
  /// kind of value.
  var actionCase = ""
  var dispatch: String?
  var sequence: Double?
  /// How long the commit took, when the line says.
  var duration: Double?
  var hasState = false
  var hasHolds = false
  /// The ranges of the values a search looks through: the store, the outcome, the action, the
  /// state, who cancelled, and the holds.
  var searched: [Range<Int>] = []

  /// Reads the fields of the line in `bytes[range]`, or returns `nil` when it is not an action of
  /// the log as the page reads one; with `searching`, notes the ranges a search looks through.
  init?(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, searching: Bool = false) {
    var reader = Reader(bytes: bytes, at: range.lowerBound, end: range.upperBound)
    reader.skipSpace()
    guard reader.take(UInt8(ascii: "{")) else { return nil }
    var seen: (store: Bool, time: Bool, outcome: Bool, action: Bool) = (false, false, false, false)
    reader.skipSpace()
    if reader.take(UInt8(ascii: "}")) { return nil }
    while true {
      reader.skipSpace()
      guard let key = reader.string() else { return nil }
      reader.skipSpace()
      guard reader.take(UInt8(ascii: ":")) else { return nil }
      reader.skipSpace()
      let start = reader.at
      guard reader.skipValue() else { return nil }
      let value = start..<reader.at
      switch Self.name(bytes, key) {
      case "store":
        guard let text = reader.text(of: value) else { return nil }
        store = text
        seen.store = true
        if searching { searched.append(value) }
      case "time":
        guard reader.text(of: value) != nil else { return nil }
        seen.time = true
      case "outcome":
        guard let text = reader.text(of: value) else { return nil }
        outcome = text
        seen.outcome = true
        if searching { searched.append(value) }
      case "action":
        actionCase = reader.caseName(of: value)
        seen.action = true
        if searching { searched.append(value) }
      case "state":
        hasState = true
        if searching { searched.append(value) }
      case "holds":
        hasHolds =
          bytes[value.lowerBound] == UInt8(ascii: "[")
          && reader.firstNonSpace(after: value.lowerBound) != UInt8(ascii: "]")
        if searching { searched.append(value) }
      case "cancelledBy":
        if searching { searched.append(value) }
      case "dispatch":
        dispatch = reader.text(of: value)
      case "sequence":
        sequence = reader.number(in: value)
      case "durationNanoseconds":
        duration = reader.number(in: value)
      default: break
      }
      reader.skipSpace()
      if reader.take(UInt8(ascii: ",")) { continue }
      guard reader.take(UInt8(ascii: "}")) else { return nil }
      break
    }
    reader.skipSpace()
    guard reader.at == reader.end, seen.store, seen.time, seen.outcome, seen.action else { return nil }
  }

  /// The key in `range` (its quotes left out) when it is one the index keeps, without escapes.
  private static func name(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
    guard range.count <= 20 else { return "" }
    return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
  }

  /// A cursor over the bytes of one line.
  struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var at: Int
    let end: Int

    mutating func skipSpace() {
      while at < end, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0D || bytes[at] == 0x0A { at += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
      guard at < end, bytes[at] == byte else { return false }
      at += 1
      return true
    }

    func firstNonSpace(after index: Int) -> UInt8? {
      var index = index + 1
      while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0D || bytes[index] == 0x0A {
        index += 1
      }
      return index < end ? bytes[index] : nil
    }

    /// Skips a string; returns the range of its contents, quotes left out.
    mutating func string() -> Range<Int>? {
      guard take(UInt8(ascii: "\"")) else { return nil }
      let start = at
      while at < end {
        let byte = bytes[at]
        if byte == UInt8(ascii: "\\") {
          at += 2
          continue
        }
        if byte == UInt8(ascii: "\"") {
          at += 1
          return start..<(at - 1)
        }
        at += 1
      }
      return nil
    }

    /// Skips one value, counting brackets outside strings: never deeper than one loop.
    mutating func skipValue() -> Bool {
      guard at < end else { return false }
      switch bytes[at] {
      case UInt8(ascii: "\""): return string() != nil
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        var depth = 0
        while at < end {
          switch bytes[at] {
          case UInt8(ascii: "\""):
            guard string() != nil else { return false }
            continue
          case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 {
              at += 1
              return true
            }
          default: break
          }
          at += 1
        }
        return false
      default:
        let start = at
        while at < end {
          let byte = bytes[at]
          if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20
            || byte == 0x09 || byte == 0x0D || byte == 0x0A
          {
            break
          }
          at += 1
        }
        return at > start
      }
    }

    /// The text of the string value in `range`, its escapes read; `nil` when it is not a string.
    func text(of range: Range<Int>) -> String? {
      guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
      let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
      let slice = UnsafeBufferPointer(rebasing: bytes[inner])
      guard slice.contains(UInt8(ascii: "\\")) else { return String(decoding: slice, as: UTF8.self) }
      return JSONString.decode(slice)
    }

    /// The case of the action in `range`, as the page's `caseOf` names it.
    func caseName(of range: Range<Int>) -> String {
      switch bytes[range.lowerBound] {
      case UInt8(ascii: "\""): return text(of: range) ?? "string"
      case UInt8(ascii: "["): return "[…]"
      case UInt8(ascii: "{"):
        var reader = Reader(bytes: bytes, at: range.lowerBound + 1, end: range.upperBound)
        reader.skipSpace()
        guard let key = reader.string() else { return "object" }
        reader.skipSpace()
        guard reader.take(UInt8(ascii: ":")) else { return "object" }
        reader.skipSpace()
        guard reader.skipValue() else { return "object" }
        reader.skipSpace()
        guard reader.take(UInt8(ascii: "}")) else { return "object" }
        return text(of: (key.lowerBound - 1)..<(key.upperBound + 1)) ?? "object"
      case UInt8(ascii: "t"), UInt8(ascii: "f"): return "boolean"
      case UInt8(ascii: "n"): return "object"
      default: return "number"
      }
    }

    /// The number in `range`, or `nil` when it is not one.
    func number(in range: Range<Int>) -> Double? {
      guard range.count <= 40 else { return nil }
      let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
      guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
      return value
    }
  }
}

/// The escapes of a JSON string read: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\uXXXX`
/// (a pair of them for a character past U+FFFF); a lone surrogate or a bad escape reads as U+FFFD.
enum JSONString {
  static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    var scalars = String.UnicodeScalarView()
    var utf8: [UInt8] = []
    var index = 0
    func flush() {
      scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
      utf8.removeAll(keepingCapacity: true)
    }
    func hex(at index: Int) -> UInt32? {
      guard index + 4 <= bytes.count else { return nil }
      var value: UInt32 = 0
      for byte in bytes[index..<(index + 4)] {
        guard let digit = Self.digit(byte) else { return nil }
        value = value << 4 | digit
      }
      return value
    }
    while index < bytes.count {
      let byte = bytes[index]
      guard byte == UInt8(ascii: "\\"), index + 1 < bytes.count else {
        utf8.append(byte)
        index += 1
        continue
      }
      let escaped = bytes[index + 1]
      index += 2
      switch escaped {
      case UInt8(ascii: "b"): utf8.append(0x08)
      case UInt8(ascii: "f"): utf8.append(0x0C)
      case UInt8(ascii: "n"): utf8.append(0x0A)
      case UInt8(ascii: "r"): utf8.append(0x0D)
      case UInt8(ascii: "t"): utf8.append(0x09)
      case UInt8(ascii: "u"):
        flush()
        guard let unit = hex(at: index) else {
          scalars.append("\u{FFFD}")
          continue
        }
        index += 4
        if (0xD800..<0xDC00).contains(unit), index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
          bytes[index + 1] == UInt8(ascii: "u"), let low = hex(at: index + 2), (0xDC00..<0xE000).contains(low)
        {
          index += 6
          scalars.append(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}")
        } else {
          scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
        }
      default: utf8.append(escaped)
      }
    }
    flush()
    return String(scalars)
  }

  private static func digit(_ byte: UInt8) -> UInt32? {
    switch byte {
    case 0x30...0x39: UInt32(byte - 0x30)
    case 0x41...0x46: UInt32(byte - 0x41 + 10)
    case 0x61...0x66: UInt32(byte - 0x61 + 10)
    default: nil
    }
  }
}
