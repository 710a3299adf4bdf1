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
    let fields = mirror.children.map { child in
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
