/// A read-only value: a fixed one, or a view of a ``Variable`` that reflects its changes.
///
/// ```swift
/// let variable = Variable(0)
/// let constant = variable.constant
/// constant.signal.observe { print($0) }
/// variable.value = 1
/// print(constant.value)
/// // prints "0"
/// // prints "1"
/// // prints "1"
/// ```
public struct Constant<Value> {
  /// Keeps the value; shared with the variable this constant views.
  private let owner: ValueOwner<Value>

  /// Creates a constant that always holds `value`; its signal delivers it once per observer.
  ///
  /// - Parameter value: The value.
  public init(_ value: Value) {
    let core = SubjectCore(current: value)
    core.terminate()
    owner = ValueOwner(core: core)
  }

  /// Creates a read-only view of `variable`.
  ///
  /// The view keeps reading the variable's value; once the variable is freed, it keeps the
  /// last value and its signal delivers only that.
  ///
  /// - Parameter variable: The variable to reflect.
  public init(variable: Variable<Value>) {
    owner = variable.owner
  }

  /// The current value; reading it inside `withObservationTracking` tracks the variable it
  /// reflects (see <doc:TrackingWithObservation>).
  public var value: Value {
    owner.core.value
  }

  /// The current value, then every change of the underlying variable.
  public var signal: Signal<Value> {
    Signal(source: .replaying(owner))
  }
}

// The core guards the value and the observers with its lock; the owner lets the value go where
// the last constant, variable or signal of it goes, which may be any thread when it is `Sendable`.
extension Constant: Sendable where Value: Sendable {}
