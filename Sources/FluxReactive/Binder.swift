/// A way to apply values to a target object, held weakly, for ``Signal/bind(to:on:)``.
///
/// ```swift
/// extension Spinner {
///   var isSpinningBinder: Binder<Bool> {
///     Binder(target: self) { spinner, isSpinning in spinner.isSpinning = isSpinning }
///   }
/// }
/// isLoading.signal.bind(to: spinner.isSpinningBinder)
/// ```
///
/// The binder holds its target weakly: once the target is deallocated, the binding ends.
public struct Binder<Value> {
  /// Applies a value; `false` once the target is gone.
  let apply: (Value) -> Bool
  /// Whether the target is still alive.
  let isTargetAlive: () -> Bool

  /// Creates a binder that applies values to `target` with `binding`.
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - binding: Applies one value to the target, on the binding's executor.
  public init<Target: AnyObject>(target: Target, binding: @escaping (Target, Value) -> Void) {
    apply = { [weak target] value in
      guard let target else { return false }
      binding(target, value)
      return true
    }
    isTargetAlive = { [weak target] in target != nil }
  }
}

/// A binder is not `Sendable`: it holds its binding closure, which captures the target's
/// (often main-thread-only) world. Create it where you bind; bindings run it on their executor.
@available(*, unavailable)
extension Binder: Sendable {}
