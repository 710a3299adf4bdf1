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
  /// - Parameters:
  ///   - isolation: ``Isolation/mainActor``.
  ///   - observer: Called with each value, on the main actor.
  /// - Returns: The disposable that ends the observation; no call starts once it is disposed.
  @discardableResult
  public func observe(
    on isolation: Isolation,
    _ observer: @escaping @MainActor (Value) -> Void
  ) -> any Disposable {
    observe(on: .mainThread).observe { value in
      // `.mainThread` runs its work on the main queue, the main actor's executor.
      MainActor.assumeIsolated { observer(value) }
    }
  }
}
