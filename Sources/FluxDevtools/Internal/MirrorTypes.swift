import FluxCore
import Foundation

/// What ``MirrorSnapshot`` learns of a type once, for the whole process: its name, how its values
/// are read, and the names of its enum cases without values.
///
/// Each costs the committing thread microseconds when it is found out (a type's name is demangled;
/// whether a value is a `String` or has a description of its own is a dynamic cast, which looks
/// the type's conformances up), and each depends on the type alone, whose metadata lives as long
/// as the process: so each is found out once and kept, up to ``limit`` entries of each kind (past
/// them, found out again at each use, as if never kept).
// `@unchecked Sendable`: the three tables are read and written only under `lock`; what they hold
// is `Sendable`.
final class MirrorTypes: @unchecked Sendable {
  /// The table of the process.
  static let shared = MirrorTypes()
  /// How many entries each table keeps.
  static let limit = 4096

  private let lock = Lock()
  private var names: [ObjectIdentifier: String] = [:]
  private var readings: [ObjectIdentifier: Reading] = [:]
  private var caseNames: [CaseKey: String] = [:]

  /// An enum case without values, of a ``Reading/reflected(plainEnum:)`` type: the type, and the
  /// one byte that holds the case.
  private struct CaseKey: Hashable {
    let type: ObjectIdentifier
    let byte: UInt8
  }

  /// How a value of a type is read.
  enum Reading: Sendable {
    /// As a JSON scalar: a value of exactly this type.
    case scalar(Scalar)
    /// By its text: a `Date`, a `URL` or a `UUID`.
    case described
    /// Through the casts of ``MirrorSnapshot/scalar(_:)`` and ``MirrorSnapshot/described(_:)``,
    /// value by value: an `AnyHashable` (whose value a cast takes out), an object (which a cast
    /// may bridge: an `NSNumber` to an `Int`).
    case cast
    /// An optional, which a cast unwraps: through `Mirror`, which unwraps it too, so that the
    /// value it holds is read (and cast, if need be) one level deeper; through the casts where
    /// that level is past the depth limit.
    case optional
    /// Through `Mirror` alone: no cast to a scalar or described type succeeds for a value whose
    /// type is none of them and none of those of ``cast`` (a struct, an enum, a tuple, a function,
    /// a metatype), so the casts are skipped. `plainEnum`: an enum of one byte or less that
    /// neither describes nor reflects itself, whose cases without values ``caseName(_:)`` keeps.
    case reflected(plainEnum: Bool)
  }

  /// The types written as JSON scalars, each only when it is the value's own type.
  enum Scalar: Sendable {
    case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, double, float
    case string, substring, character

    init?(_ type: Any.Type) {
      let found: [(Any.Type, Scalar)] = [
        (Bool.self, .bool), (Int.self, .int), (String.self, .string), (Double.self, .double),
        (Int8.self, .int8), (Int16.self, .int16), (Int32.self, .int32), (Int64.self, .int64),
        (UInt.self, .uint), (UInt8.self, .uint8), (UInt16.self, .uint16), (UInt32.self, .uint32),
        (UInt64.self, .uint64), (Float.self, .float), (Substring.self, .substring), (Character.self, .character),
      ]
      guard let scalar = found.first(where: { $0.0 == type })?.1 else { return nil }
      self = scalar
    }
  }

  /// The name of `type`, as ``MirrorSnapshot/typeName(_:)`` writes it.
  func name(_ type: Any.Type) -> String {
    let key = ObjectIdentifier(type)
    if let name = lock.withLock({ names[key] }) { return name }
    let name = MirrorSnapshot.typeName(type)
    lock.withLock {
      if names.count < Self.limit { names[key] = name }
    }
    return name
  }

  /// How `value`'s type is read.
  func reading(of value: Any) -> Reading {
    let type = Swift.type(of: value)
    let key = ObjectIdentifier(type)
    if let reading = lock.withLock({ readings[key] }) { return reading }
    let reading = Self.find(value, type: type)
    lock.withLock {
      if readings.count < Self.limit { readings[key] = reading }
    }
    return reading
  }

  private static func find(_ value: Any, type: Any.Type) -> Reading {
    if let scalar = Scalar(type) { return .scalar(scalar) }
    if type == Date.self || type == URL.self || type == UUID.self { return .described }
    if type is any OptionalType.Type { return .optional }
    if type is AnyObject.Type || type == AnyHashable.self { return .cast }
    guard Mirror(reflecting: value).displayStyle == .enum else { return .reflected(plainEnum: false) }
    let size = _openExistential(value, do: sizeOfValue)
    let describesItself =
      value is CustomStringConvertible || value is CustomDebugStringConvertible || value is TextOutputStreamable
      || value is CustomReflectable
    return .reflected(plainEnum: size <= 1 && !describesItself)
  }

  /// How Swift prints `value`, an enum case without values of a ``Reading/reflected(plainEnum:)``
  /// type whose `plainEnum` is true: its case name.
  ///
  /// Kept by the type and the byte that holds the value: a value of one byte or less is that
  /// byte, and one case is always stored as the same byte. Such a type has no description of its
  /// own and no `customMirror`, so what Swift prints for it is its case name, the same for every
  /// value of the case.
  func caseName(_ value: Any) -> String {
    let byte = _openExistential(value, do: firstByte)
    let key = CaseKey(type: ObjectIdentifier(Swift.type(of: value)), byte: byte)
    if let name = lock.withLock({ caseNames[key] }) { return name }
    let name = MirrorSnapshot.describe(value)
    lock.withLock {
      if caseNames.count < Self.limit { caseNames[key] = name }
    }
    return name
  }
}

/// The size of a value's own type (opened from an `Any`, not the size of `Any`).
private func sizeOfValue<Value>(_ value: Value) -> Int {
  MemoryLayout<Value>.size
}

/// The first byte of a value (opened from an `Any`), 0 for a value of no bytes.
private func firstByte<Value>(_ value: Value) -> UInt8 {
  withUnsafeBytes(of: value) { $0.first ?? 0 }
}

/// The optionals, whatever they wrap: `type is any OptionalType.Type` tells an optional type.
private protocol OptionalType {}
extension Optional: OptionalType {}
