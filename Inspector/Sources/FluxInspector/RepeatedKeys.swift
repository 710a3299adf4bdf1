/// Finds a key that an object of a JSON line writes twice.
///
/// JSON leaves open which of two values of one key counts: a browser keeps the last, a decoder
/// may keep the first, and then the server would check one line and the page show another. So
/// both read a line the same way by one rule: a line that writes a key twice in one object, at
/// any depth, is an error, shown as such with the key and where (rule 21).
///
/// Keys are compared as JavaScript compares them, unit by unit of UTF-16 after their escapes are
/// read (`"st\u0061te"` is `"state"`; `"é"` and `"e"` with a combining accent are two keys). The
/// line is read in one pass with a stack of its own, never by recursion, however deep it nests.
enum RepeatedKeys {
  /// The first key written twice in one object of `bytes`, a JSON value (as `Recording` checked
  /// it), and the path of that object (`"state.items[1]"`, empty for the line itself); `nil`
  /// when every object writes each key once.
  static func first(in bytes: ArraySlice<UInt8>) -> (key: String, path: String)? {
    var containers: [Container] = []
    var iterator = bytes.makeIterator()
    while let byte = iterator.next() {
      switch byte {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        containers.append(Container(isObject: byte == UInt8(ascii: "{"), parent: containers.last))
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        _ = containers.popLast()
      case UInt8(ascii: ","):
        containers.last?.next()
      case UInt8(ascii: "\""):
        guard let container = containers.last, container.isExpectingKey else {
          skipString(&iterator)
          continue
        }
        let text = readString(&iterator)
        if !container.add(key: text) {
          return (String(decoding: text, as: UTF16.self), container.place)
        }
      default:
        // Numbers, `true`, `false`, `null`, white space and `:` hold no key.
        break
      }
    }
    return nil
  }

  /// Skips a string after its opening quote, up to and including its closing one.
  private static func skipString(_ iterator: inout IndexingIterator<ArraySlice<UInt8>>) {
    while let byte = iterator.next() {
      if byte == UInt8(ascii: "\"") { return }
      if byte == UInt8(ascii: "\\") { _ = iterator.next() }
    }
  }

  /// Reads a string after its opening quote, up to and including its closing one, and returns
  /// its text as units of UTF-16.
  private static func readString(_ iterator: inout IndexingIterator<ArraySlice<UInt8>>) -> [UInt16] {
    var units: [UInt16] = []
    var run: [UInt8] = []
    func flush() {
      units += String(decoding: run, as: UTF8.self).utf16
      run.removeAll(keepingCapacity: true)
    }
    while let byte = iterator.next() {
      switch byte {
      case UInt8(ascii: "\""):
        flush()
        return units
      case UInt8(ascii: "\\"):
        flush()
        guard let escaped = iterator.next() else { return units }
        switch escaped {
        case UInt8(ascii: "u"):
          var value: UInt16 = 0
          for _ in 0..<4 {
            guard let digit = iterator.next().flatMap({ UInt16(String(UnicodeScalar($0)), radix: 16) }) else {
              return units
            }
            value = value << 4 | digit
          }
          units.append(value)
        case UInt8(ascii: "b"): units.append(0x08)
        case UInt8(ascii: "f"): units.append(0x0C)
        case UInt8(ascii: "n"): units.append(0x0A)
        case UInt8(ascii: "r"): units.append(0x0D)
        case UInt8(ascii: "t"): units.append(0x09)
        default: units.append(UInt16(escaped))
        }
      default:
        run.append(byte)
      }
    }
    flush()
    return units
  }

  /// An object or an array being read.
  private final class Container {
    let isObject: Bool
    /// The container it is in, and the key or index it is at there.
    private let parent: Container?
    private let keyInParent: [UInt16]?
    private let indexInParent: Int
    /// In an object, its keys so far, and whether a key comes next (not a value).
    private var keys: Set<[UInt16]> = []
    private var key: [UInt16] = []
    private(set) var isExpectingKey: Bool
    /// In an array, the index of the element being read.
    private var index = 0

    init(isObject: Bool, parent: Container?) {
      self.isObject = isObject
      self.parent = parent
      keyInParent = parent.flatMap { $0.isObject ? $0.key : nil }
      indexInParent = parent?.index ?? 0
      isExpectingKey = isObject
    }

    /// Takes `key` as the next key; `false` when it was there already.
    func add(key: [UInt16]) -> Bool {
      self.key = key
      isExpectingKey = false
      return keys.insert(key).inserted
    }

    /// A comma: the next element, or the next key.
    func next() {
      if isObject { isExpectingKey = true } else { index += 1 }
    }

    /// Where it is in the line, as a path (`state.items[1]`), worked out when asked, by a loop.
    var place: String {
      var names: [String] = []
      var container: Container? = self
      while let current = container, current.parent != nil {
        names.append(
          current.keyInParent.map { "." + String(decoding: $0, as: UTF16.self) } ?? "[\(current.indexInParent)]")
        container = current.parent
      }
      let path = names.reversed().joined()
      return path.hasPrefix(".") ? String(path.dropFirst()) : path
    }
  }
}
