import FluxReactive

/// How a failed assertion shows a state: by its own description if it has one, or else its
/// type and stored properties, with each `Variable` and `Constant` shown by the value it holds
/// now: `CounterState(count: 3, title: "Groceries")`.
enum StateDescription {
  static func describe(_ state: Any) -> String {
    if state is CustomStringConvertible || state is CustomDebugStringConvertible {
      return String(describing: state)
    }
    let mirror = Mirror(reflecting: state)
    // A mirror holds the properties its class declares; those of its superclasses are in the
    // mirrors of `superclassMirror`, which a state that subclasses a base class of shared
    // properties has. Shown from the root class down, as the object lays them out.
    let mirrors = sequence(first: mirror, next: \.superclassMirror).reversed()
    let fields = mirrors.flatMap(\.children).map { child in
      "\(child.label ?? "_"): \(describeField(child.value))"
    }
    return "\(mirror.subjectType)(\(fields.joined(separator: ", ")))"
  }

  private static func describeField(_ value: Any) -> String {
    if let holder = value as? any CurrentValueDescribing { return holder.currentValueDescription }
    return String(reflecting: value)
  }
}

/// A holder of a value that a failure shows by the value it holds.
protocol CurrentValueDescribing {
  var currentValueDescription: String { get }
}

extension Variable: CurrentValueDescribing {
  var currentValueDescription: String { String(reflecting: value) }
}

extension Constant: CurrentValueDescribing {
  var currentValueDescription: String { String(reflecting: value) }
}
