import FluxCore

/// A way to apply values to a target object on the main actor, held weakly, for
/// ``Signal/bind(to:on:)``.
///
/// ```swift
/// @MainActor final class Spinner {
///   var isSpinning = false
///
///   var isSpinningBinder: Binder<Bool> {
///     Binder(target: self) { spinner, isSpinning in spinner.isSpinning = isSpinning }
///   }
/// }
/// isLoading.signal.bind(to: spinner.isSpinningBinder)
/// ```
///
/// The binder holds its target weakly: once the target is deallocated, the binding ends. Its
/// binding runs on the main actor, the isolation of the views and view models that bindings
/// update, so it may touch the target's main-actor state; you create a binder on the main actor.
/// The binding closure may capture plain objects of the main actor: it is let go of there too,
/// whatever thread ends a binding (one ended elsewhere hands it to the main queue).
///
/// > Warning: Swift 6.3 does not check what a main-actor closure made on the main actor
/// > captures ([swiftlang/swift#76541](https://github.com/swiftlang/swift/issues/76541)): an
/// > object the binding closure captures can still be sent to another task afterwards, where it
/// > races the binding. Send nothing it captured elsewhere.
public struct Binder<Value> {
  /// Applies a value; `false` once the target is gone. What `binding` captured belongs to the
  /// main actor: the box lets go of it there, wherever the binding ends.
  let apply: MainActorReleased<@MainActor (Value) -> Bool>
  /// Whether the target is still alive.
  let isTargetAlive: @MainActor () -> Bool

  /// Creates a binder that applies values to `target` with `binding`, on the main actor.
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - binding: Applies one value to the target.
  @MainActor
  public init<Target: AnyObject>(target: Target, binding: @escaping @MainActor (Target, Value) -> Void) {
    // `target` stays in the main actor's region: only these main-actor closures refer to it.
    weak let target = target
    apply = MainActorReleased { value in
      guard let target else { return false }
      binding(target, value)
      return true
    }
    isTargetAlive = { target != nil }
  }

  /// Applies every value of `signal` to this binder's target, until the target is deallocated;
  /// the same as `signal.bind(to: self, on: executor)`.
  ///
  /// - Parameters:
  ///   - signal: The values to apply.
  ///   - executor: Where values are delivered; see ``Signal/bind(to:on:)``.
  /// - Returns: The disposable that ends the binding earlier.
  @MainActor
  @discardableResult
  public func bind(signal: Signal<Value>, on executor: Executor = .mainThread) -> any Disposable
  where Value: Sendable {
    signal.bind(to: self, on: executor)
  }
}

/// A binder is not `Sendable`: it holds its target, which belongs to the main actor's world.
@available(*, unavailable)
extension Binder: Sendable {}
