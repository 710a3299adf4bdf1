import FluxCore

/// An isolation that ``Signal/observe(on:_:)`` delivers in.
public enum Isolation: Sendable {
  /// The main actor: views, view controllers and view models.
  case mainActor
}

extension Signal where Value: Sendable {
  /// Calls `observer`, isolated to the main actor, with every value, on the main actor.
  ///
  /// The one spelling for a `@MainActor` type (a view model, a view controller) that observes
  /// with a closure touching its own state:
  ///
  /// ```swift
  /// @MainActor final class CounterViewModel {
  ///   var text = ""
  ///   private let scope = DisposableScope()
  ///
  ///   init(store: Store<CounterState>) {
  ///     scope += store.computed.countTextValues.observe(on: .mainActor) { [weak self] text in
  ///       self?.text = text
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// Values are delivered through `Executor.mainThread`: in order, inline when sent on the
  /// main queue with nothing pending there, otherwise enqueued. A plain ``observe(_:)`` would
  /// run the closure on the sending thread, so the compiler rejects a closure there that
  /// touches main-actor state.
  ///
  /// `observer` may capture plain objects that belong to the main actor (they need not be
  /// `Sendable`): it is let go of on the main actor too, and with it what it captured, whatever
  /// thread ends the observation. Ended on another thread (disposed there, or by freeing the
  /// sink or variable there), the observation hands the closure to the main queue, which lets
  /// go of it when it next runs. Called off the main actor, this function takes the closure
  /// from its caller (`consuming`), so an observation that ends while it runs lets go of the
  /// closure on the main actor too.
  ///
  /// > Warning: Swift 6.3 does not check what a closure isolated to the main actor captures when
  /// > it is made on the main actor
  /// > ([swiftlang/swift#76541](https://github.com/swiftlang/swift/issues/76541)): it lets a
  /// > plain object captured here be sent to another task afterwards, where it races `observer`.
  /// > Capture state that stays on the main actor (a property of `self`, say), and send nothing
  /// > that `observer` captured elsewhere.
  ///
  /// - Parameters:
  ///   - isolation: ``Isolation/mainActor``.
  ///   - observer: Called with each value, on the main actor.
  /// - Returns: The disposable that ends the observation; no call starts once it is disposed.
  @discardableResult
  public func observe(
    on isolation: Isolation,
    _ observer: consuming @escaping @MainActor (Value) -> Void
  ) -> any Disposable {
    // What `observer` captured belongs to the main actor: the box lets go of it there. The box
    // takes the caller's reference (`consuming`, then `consume`): called off the main actor, a
    // reference the caller kept to the end of the call could be the last one, when the
    // observation ends during the call and the main queue lets go of the box's at once.
    let observer = MainActorReleased(consume observer)
    return observe(on: .mainThread).observe { value in
      // `.mainThread` runs its work on the main queue, the main actor's executor.
      MainActor.assumeIsolated { observer.payload(value) }
    }
  }
}
