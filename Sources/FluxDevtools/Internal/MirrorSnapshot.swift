import Foundation

/// A snapshot of a value of any type, read through `Mirror`: what ``StateSnapshots/mirror``
/// writes as a line's `"stateMirror"`, to show a state that is not `Encodable`. It is read-only:
/// nothing reads it back as a state.
///
/// The value is read at once, where the snapshot is taken (on the store's executor, right after
/// the commit), into a ``JSONValue`` that holds no reference to the state: encoding it later, on
/// any thread, reads nothing of the app's.
///
/// Its shape (<doc:RecordingAndReplaying>, "Snapshots of any state"):
/// - `null` for `nil`; a JSON number for the whole numbers and `Double`, `Float`; `true`,
///   `false`; a string for `String`, `Substring`, `Character` (a text longer than
///   ``textLimit`` UTF-8 bytes is cut there and ends in `…`).
/// - Every other value is an object with `"kind"` and `"type"` (as Swift writes the type, without
///   its module): a struct `{"kind":"struct","type":"Item","fields":{"id":1,"title":"Milk"}}`; an
///   object `{"kind":"class","type":"Node","id":1,"fields":{…}}` (its superclasses' stored
///   properties first), `id` numbering the objects of one snapshot in the order they are met; an
///   object met again, through a shared reference or a cycle, `{"kind":"ref","type":"Node","id":1}`;
///   an enum case `{"kind":"enum","type":"Filter","case":"done"}`, with `"payload"` when the case
///   has values (one value as itself, labelled or several as a tuple); a tuple
///   `{"kind":"tuple","type":"(Int, String)","elements":[1,"a"]}`, with `"labels"` (`""` for an
///   unlabelled element) when it has some; an array or
///   another collection, and a set, `{"kind":"collection"` or `"set","type":…,"count":3,"elements":[…]}`;
///   a dictionary `{"kind":"dictionary","type":…,"count":1,"entries":[{"key":…,"value":…}]}`; a
///   value that `Mirror` shows nothing inside (a function, a metatype, a `Date`, a `URL`)
///   `{"kind":"value","type":"Date","description":"…"}`, by its description.
/// - Where the snapshot stops, the marker `{"kind":"…","reason":…}`: `"depth"` for a value
///   deeper than ``depthLimit`` (with its `"type"`), `"size"` once ``nodeLimit`` values are
///   written (with its `"type"`), and `"count"` as the last element of a collection longer than
///   ``elementLimit``, with how many elements it leaves out (`"omitted"`).
enum MirrorSnapshot {
  /// How deep values nest before the marker stands for the rest.
  static let depthLimit = 32
  /// How many elements of one collection are written.
  static let elementLimit = 100
  /// How many values one snapshot writes, in all.
  static let nodeLimit = 10_000
  /// How many UTF-8 bytes of one text are written.
  static let textLimit = 1000

  /// The snapshot of `value`.
  static func take(_ value: Any) -> JSONValue {
    var reader = Reader()
    return withExtendedLifetime(value) { reader.node(value, depth: 0) }
  }

  /// One walk of a value: the values it has written, and the objects it has met.
  private struct Reader {
    var written = 0
    /// The objects met, by identity, with their `id`; kept alive until the walk ends, so that an
    /// identity is never taken again by another object made meanwhile (a `customMirror` may make some).
    var objects: [ObjectIdentifier: (id: Int, object: AnyObject)] = [:]
    /// The names of the types met: Swift writes a type's name by demangling it, which costs
    /// microseconds, and a state holds many values of few types. Found in ``MirrorTypes``, which
    /// keeps them for the process, and kept here too, so that the walk takes no lock for them.
    var typeNames: [ObjectIdentifier: String] = [:]
    /// How the values of the types met are read (``MirrorTypes/reading(of:)``), kept here too.
    var readings: [ObjectIdentifier: MirrorTypes.Reading] = [:]

    mutating func typeName(_ type: Any.Type) -> String {
      if let name = typeNames[ObjectIdentifier(type)] { return name }
      let name = MirrorTypes.shared.name(type)
      typeNames[ObjectIdentifier(type)] = name
      return name
    }

    mutating func reading(of value: Any) -> MirrorTypes.Reading {
      let key = ObjectIdentifier(Swift.type(of: value))
      if let reading = readings[key] { return reading }
      let reading = MirrorTypes.shared.reading(of: value)
      readings[key] = reading
      return reading
    }

    mutating func node(_ value: Any, depth: Int) -> JSONValue {
      guard written < MirrorSnapshot.nodeLimit else {
        return MirrorSnapshot.marker("size", type: typeName(Swift.type(of: value)))
      }
      // What the casts of `scalar` and `described` find, found faster where the type tells it.
      let reading = reading(of: value)
      switch reading {
      case .scalar(let scalar):
        written += 1
        return MirrorSnapshot.scalar(value, of: scalar)
      case .reflected: break
      case .optional where depth < MirrorSnapshot.depthLimit:
        // `Mirror` unwraps it below, and reads what it holds one level deeper, as a cast here would.
        break
      case .described, .cast, .optional:
        if let scalar = MirrorSnapshot.scalar(value) {
          written += 1
          return scalar
        }
        if let described = MirrorSnapshot.described(value) {
          written += 1
          return described
        }
      }
      let mirror = Mirror(reflecting: value)
      let type = typeName(mirror.subjectType)
      if mirror.displayStyle == .optional {
        guard let wrapped = mirror.children.first?.value else { return .null }
        // A level deeper, so that even a `customMirror` that says it is an optional of itself ends.
        return depth < MirrorSnapshot.depthLimit
          ? node(wrapped, depth: depth + 1) : MirrorSnapshot.marker("depth", type: type)
      }
      guard depth < MirrorSnapshot.depthLimit else { return MirrorSnapshot.marker("depth", type: type) }
      written += 1
      switch mirror.displayStyle {
      case .struct:
        return .object(["kind": .string("struct"), "type": .string(type), "fields": fields(mirror, depth: depth)])
      case .class:
        return object(value, mirror: mirror, type: type, depth: depth)
      case .enum:
        guard case .reflected(plainEnum: true) = reading else {
          return enumCase(value, mirror: mirror, type: type, depth: depth, plain: false)
        }
        return enumCase(value, mirror: mirror, type: type, depth: depth, plain: true)
      case .tuple:
        var members: [String: JSONValue] = ["kind": .string("tuple"), "type": .string(type)]
        members["elements"] = .array(mirror.children.map { node($0.value, depth: depth + 1) })
        // Unlabelled elements are named `.0`, `.1`…
        let labels = mirror.children.map { child in child.label.map { $0.hasPrefix(".") ? "" : $0 } ?? "" }
        if labels.contains(where: { !$0.isEmpty }) { members["labels"] = .array(labels.map(JSONValue.string)) }
        return .object(members)
      case .collection, .set:
        let kind = mirror.displayStyle == .set ? "set" : "collection"
        let (count, shown) = MirrorSnapshot.elements(of: mirror)
        var elements: [JSONValue] = []
        for element in shown { elements.append(node(element, depth: depth + 1)) }
        MirrorSnapshot.markOmitted(count: count, in: &elements)
        return .object(
          ["kind": .string(kind), "type": .string(type), "count": .integer(Int64(count)), "elements": .array(elements)])
      case .dictionary:
        let (count, shown) = MirrorSnapshot.elements(of: mirror)
        var entries: [JSONValue] = []
        for pair in shown {
          let parts = Array(Mirror(reflecting: pair).children.prefix(2))
          guard parts.count == 2 else {
            entries.append(node(pair, depth: depth + 1))
            continue
          }
          let key = node(parts[0].value, depth: depth + 1)
          entries.append(.object(["key": key, "value": node(parts[1].value, depth: depth + 1)]))
        }
        MirrorSnapshot.markOmitted(count: count, in: &entries)
        return .object(
          [
            "kind": .string("dictionary"), "type": .string(type), "count": .integer(Int64(count)),
            "entries": .array(entries),
          ])
      default:
        guard mirror.children.isEmpty else {
          // A type that reflects itself without a style: its children as fields.
          return .object(["kind": .string("struct"), "type": .string(type), "fields": fields(mirror, depth: depth)])
        }
        return MirrorSnapshot.value(description: MirrorSnapshot.describe(value), type: type)
      }
    }

    /// The stored properties of `mirror` and of its superclasses' mirrors, by label; an
    /// unlabelled child by its place (`.0`).
    mutating func fields(_ mirror: Mirror, depth: Int) -> JSONValue {
      var chain = [mirror]
      while let parent = chain[chain.count - 1].superclassMirror, chain.count <= MirrorSnapshot.depthLimit {
        chain.append(parent)
      }
      var fields: [String: JSONValue] = [:]
      for mirror in chain.reversed() {
        for (place, child) in mirror.children.enumerated() {
          fields[child.label ?? ".\(place)"] = node(child.value, depth: depth + 1)
        }
      }
      return .object(fields)
    }

    /// An object: written once with its fields, and as a `ref` to its `id` wherever it is met again.
    mutating func object(_ value: Any, mirror: Mirror, type: String, depth: Int) -> JSONValue {
      // A class, so `value as AnyObject` is the object itself, not a box around a value.
      guard Swift.type(of: value) is AnyObject.Type else {
        return .object(["kind": .string("class"), "type": .string(type), "fields": fields(mirror, depth: depth)])
      }
      let object = value as AnyObject
      let identity = ObjectIdentifier(object)
      if let seen = objects[identity] {
        return .object(["kind": .string("ref"), "type": .string(type), "id": .integer(Int64(seen.id))])
      }
      let id = objects.count + 1
      objects[identity] = (id, object)
      return .object(
        [
          "kind": .string("class"), "type": .string(type), "id": .integer(Int64(id)),
          "fields": fields(mirror, depth: depth),
        ])
    }

    /// An enum case: its name, and its values as `payload` when it has some. `plain`: of a type
    /// whose cases without values ``MirrorTypes/caseName(_:)`` keeps.
    mutating func enumCase(_ value: Any, mirror: Mirror, type: String, depth: Int, plain: Bool) -> JSONValue {
      var members: [String: JSONValue] = ["kind": .string("enum"), "type": .string(type)]
      if let payload = mirror.children.first, let name = payload.label {
        members["case"] = .string(name)
        members["payload"] = node(payload.value, depth: depth + 1)
      } else {
        // A case without values: its name is what Swift prints (the description, for a type that
        // describes itself).
        let name = plain ? MirrorTypes.shared.caseName(value) : MirrorSnapshot.describe(value)
        members["case"] = .string(MirrorSnapshot.text(name))
      }
      return .object(members)
    }

  }

  /// The count of a collection's elements, and the first ``elementLimit`` of them.
  static func elements(of mirror: Mirror) -> (count: Int, shown: [Any]) {
    (mirror.children.count, mirror.children.prefix(elementLimit).map(\.value))
  }

  /// Ends `elements`, the first of `count`, with the marker of those left out, if any are.
  static func markOmitted(count: Int, in elements: inout [JSONValue]) {
    guard count > elements.count else { return }
    elements.append(
      .object([
        "kind": .string("…"), "reason": .string("count"), "omitted": .integer(Int64(count - elements.count)),
      ]))
  }

  /// The marker that stands for what a snapshot leaves out.
  static func marker(_ reason: String, type: String) -> JSONValue {
    .object(["kind": .string("…"), "reason": .string(reason), "type": .string(type)])
  }

  /// `value`, whose type is exactly the one of `scalar`, as a JSON scalar: what ``scalar(_:)``
  /// returns for it, by a cast to that type alone.
  static func scalar(_ value: Any, of scalar: MirrorTypes.Scalar) -> JSONValue {
    switch scalar {
    case .bool: .bool(value as! Bool)
    case .int: .integer(Int64(value as! Int))
    case .int8: .integer(Int64(value as! Int8))
    case .int16: .integer(Int64(value as! Int16))
    case .int32: .integer(Int64(value as! Int32))
    case .int64: .integer(value as! Int64)
    case .uint: .unsigned(UInt64(value as! UInt))
    case .uint8: .unsigned(UInt64(value as! UInt8))
    case .uint16: .unsigned(UInt64(value as! UInt16))
    case .uint32: .unsigned(UInt64(value as! UInt32))
    case .uint64: .unsigned(value as! UInt64)
    case .double: .double(value as! Double)
    case .float: .double(Double((value as! Float).description) ?? Double(value as! Float))
    case .string: .string(text(value as! String))
    case .substring: .string(text(String(value as! Substring)))
    case .character: .string(text(String(value as! Character)))
    }
  }

  /// A value written as a JSON scalar; `nil` for others. An optional that holds one is unwrapped
  /// by the cast.
  static func scalar(_ value: Any) -> JSONValue? {
    switch value {
    case let value as Bool: .bool(value)
    case let value as Int: .integer(Int64(value))
    case let value as Int8: .integer(Int64(value))
    case let value as Int16: .integer(Int64(value))
    case let value as Int32: .integer(Int64(value))
    case let value as Int64: .integer(value)
    case let value as UInt: .unsigned(UInt64(value))
    case let value as UInt8: .unsigned(UInt64(value))
    case let value as UInt16: .unsigned(UInt64(value))
    case let value as UInt32: .unsigned(UInt64(value))
    case let value as UInt64: .unsigned(value)
    // Non-finite numbers are written as the log writes them: "Infinity", "-Infinity", "NaN".
    case let value as Double: .double(value)
    // Through its shortest text, so that 0.1 as a `Float` is written 0.1.
    case let value as Float: .double(Double(value.description) ?? Double(value))
    case let value as String: .string(text(value))
    case let value as Substring: .string(text(String(value)))
    case let value as Character: .string(text(String(value)))
    default: nil
    }
  }

  /// A value of a Foundation type that reads best by its text (a `Date` as the log writes times);
  /// `nil` for others.
  static func described(_ value: Any) -> JSONValue? {
    switch value {
    case let date as Date: Self.value(description: LogTime.string(from: date), type: "Date")
    case let url as URL: Self.value(description: url.absoluteString, type: "URL")
    case let uuid as UUID: Self.value(description: uuid.uuidString, type: "UUID")
    default: nil
    }
  }

  /// A value that `Mirror` shows nothing inside, by its description.
  static func value(description: String, type: String) -> JSONValue {
    .object(["kind": .string("value"), "type": .string(type), "description": .string(text(description))])
  }

  /// `value` cut to ``textLimit`` UTF-8 bytes (between characters), with `…` where it is cut.
  static func text(_ value: String) -> String {
    guard value.utf8.count > textLimit else { return value }
    var bytes = 0
    var end = value.startIndex
    for character in value {
      bytes += character.utf8.count
      guard bytes <= textLimit else { break }
      end = value.index(after: end)
    }
    return String(value[..<end]) + "…"
  }

  /// How Swift prints `value`.
  static func describe(_ value: Any) -> String {
    String(describing: value)
  }

  /// The name of a type as Swift writes it, without its module: `Item`, `Array<Item>`.
  static func typeName(_ type: Any.Type) -> String {
    text(String(describing: type))
  }
}

extension JSONValue: Encodable {
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .unsigned(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let values): try container.encode(values)
    case .object(let members): try container.encode(members)
    }
  }
}
