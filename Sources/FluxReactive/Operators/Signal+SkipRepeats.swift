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
        let previous = last.replace(with: value)
        if previous.map({ $0 != value }) ?? true { observer(value) }
        // `previous` is released here, after the delivery: its deinit may send again.
      }
    }
  }
}

/// The last value one ``Signal/skipRepeats()`` observation delivered.
///
/// Calls never overlap (the upstream delivers one value at a time), but one may start inside
/// another on the same thread: the deinit of a replaced value, or the user's `==`, may send
/// again. So the lock guards only the exchange, and the caller compares and releases the old
/// value after it (no user code under a Flux lock: invariant 16).
///
/// `@unchecked Sendable`: `value` is only read and written under `lock`.
final class LastValue<Value: Equatable & Sendable>: @unchecked Sendable {
  private let lock = Lock()
  private var value: Value?

  /// Stores `new` and returns the value it replaces (`nil` the first time).
  func replace(with new: Value) -> Value? {
    lock.withLock {
      let old = value
      value = new
      return old
    }
  }
}
