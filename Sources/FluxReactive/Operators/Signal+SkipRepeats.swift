import FluxCore

extension Signal where Value: Equatable & Sendable {
  /// A signal that leaves out each value equal to the one delivered just before it.
  ///
  /// ```swift
  /// let count = Variable(0)
  /// count.signal.skipRepeats().observe { print($0) }
  /// count.value = 0
  /// count.value = 1
  /// // prints "0"
  /// // prints "1"
  /// ```
  ///
  /// Each observation compares with its own last value; the first value always passes. Combine
  /// calls this operator `removeDuplicates()`.
  ///
  /// A ``Variable`` delivers every set, an equal value too, and tells Observation of every set;
  /// `skipRepeats()` filters a signal, not Observation. To keep a view from redrawing for an
  /// equal value, do not set it: `if variable.value != new { variable.value = new }` in the
  /// mutation, or hold the signal's values with ``latest(startingWith:duringScopeOf:)`` after
  /// `skipRepeats()`.
  ///
  /// - Returns: The signal without repeated values.
  public func skipRepeats() -> Signal<Value> {
    let source = source  // `Sendable` whatever `Value` is, unlike `self`
    return Signal.forwarding { observer in
      let last = LastValue<Value>()
      return Signal(source: source).observe { value in
        if last.replace(with: value) { observer(value) }
      }
    }
  }
}

/// The last value one ``Signal/skipRepeats()`` observation delivered.
///
/// `@unchecked Sendable`: `value` is only read and written under `lock`.
final class LastValue<Value: Equatable & Sendable>: @unchecked Sendable {
  private let lock = Lock()
  private var value: Value?

  /// Stores `new` and returns `true` if it differs from the stored value (or none was stored).
  func replace(with new: Value) -> Bool {
    lock.withLock {
      if let value, value == new { return false }
      value = new
      return true
    }
  }
}
