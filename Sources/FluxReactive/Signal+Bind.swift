import FluxCore

extension Signal where Value: Sendable {
  /// Applies every value to `binder`'s target on the main actor, until the target is
  /// deallocated.
  ///
  /// ```swift
  /// isViewHidden.signal.bind(to: view.hiddenBinder)
  /// ```
  ///
  /// Binding to a binder whose target is already gone returns a disposed disposable. Once the
  /// target is gone, the binding ends, and releases the binder, at the first value that
  /// arrives after that, when the source ends, or when it is disposed, whichever comes first
  /// (there is no way, on every platform, to learn of an object's end when it happens). The
  /// binder's closure, and what it captured, is let go of on the main actor: a binding that
  /// ends on another thread hands it to the main queue.
  ///
  /// > Important: A binding runs on the main actor, so `executor` must run its work on the main
  /// > queue: `Executor.mainThread` (the default), or `Executor.immediate` for values sent
  /// > on the main queue. A value delivered anywhere else stops the program with a message
  /// > rather than touch the target off the main actor.
  ///
  /// - Parameters:
  ///   - binder: Applies values to its target.
  ///   - executor: Where values are delivered; the main queue by default.
  /// - Returns: The disposable that ends the binding earlier.
  @MainActor
  @discardableResult
  public func bind(to binder: Binder<Value>, on executor: Executor = .mainThread) -> any Disposable {
    guard binder.isTargetAlive() else { return DisposedDisposable() }
    let binding = LateDisposable()
    let apply = binder.apply
    binding.set(
      observe(on: executor).observe { value in
        if !MainQueue.shared.isOnMainQueue { Self.boundOffMain() }
        MainActor.assumeIsolated {
          if !apply.payload(value) { binding.dispose() }
        }
      })
    return binding
  }

  static func boundOffMain() -> Never {
    fatalError(
      "Flux: a binding was delivered off the main queue; bindings run on the main actor. "
        + "Bind on .mainThread (the default), or on .immediate only for values sent on the main queue.")
  }

  /// Applies every value to `target` with `binding` on the main actor, until `target` is
  /// deallocated.
  ///
  /// ```swift
  /// text.signal.bind(to: label) { label, text in
  ///   label.text = text
  /// }
  /// ```
  ///
  /// `binding` may capture plain objects of the main actor: it is let go of on the main actor,
  /// wherever the binding ends (see ``bind(to:on:)``).
  ///
  /// > Warning: Swift 6.3 does not check what a main-actor closure made on the main actor
  /// > captures (swiftlang/swift#76541): an object `binding` captures can still be sent to
  /// > another task afterwards, where it races the binding. Send nothing it captured elsewhere.
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - executor: Where values are delivered; see ``bind(to:on:)``.
  ///   - binding: Applies one value to `target`, on the main actor.
  /// - Returns: The disposable that ends the binding earlier.
  @MainActor
  @discardableResult
  public func bind<Target: AnyObject>(
    to target: Target,
    on executor: Executor = .mainThread,
    binding: @escaping @MainActor (Target, Value) -> Void
  ) -> any Disposable {
    bind(to: Binder(target: target, binding: binding), on: executor)
  }

  /// Sets `target[keyPath: keyPath]` to every value on the main actor, until `target` is
  /// deallocated.
  ///
  /// ```swift
  /// countText.signal.bind(to: label, \.text)
  /// ```
  ///
  /// > Warning: Write the key path here, in the call. Swift 6.3 lets a key path to a property
  /// > isolated to another global actor be formed in that actor and then sent here
  /// > ([swiftlang/swift#80388](https://github.com/swiftlang/swift/issues/80388)); the binding
  /// > would then set that property on the main actor. For a target of another actor, observe
  /// > and hop to that actor yourself. A key path keeps the arguments of its subscripts
  /// > (`\.[item]`), and Swift 6.3 does not see that either: an argument that is not `Sendable`
  /// > can still be sent to another task afterwards, where it races the binding. Send nothing
  /// > that the key path keeps elsewhere.
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - keyPath: The property to set.
  ///   - executor: Where values are delivered; see ``bind(to:on:)``.
  /// - Returns: The disposable that ends the binding earlier.
  @MainActor
  @discardableResult
  public func bind<Target: AnyObject>(
    to target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value>,
    on executor: Executor = .mainThread
  ) -> any Disposable {
    bind(to: Binder(target: target) { target, value in target[keyPath: keyPath] = value }, on: executor)
  }

  /// Sets the optional property `target[keyPath: keyPath]` to every value on the main actor,
  /// until `target` is deallocated.
  ///
  /// ```swift
  /// countText.signal.bind(to: label, \.text)  // label.text: String?
  /// ```
  ///
  /// > Warning: Write the key path here, in the call: Swift 6.3 lets a key path to a property
  /// > isolated to another global actor be formed there and sent here (swiftlang/swift#80388).
  /// > Nor does it see the arguments a key path keeps for its subscripts (`\.[item]`): send
  /// > nothing that the key path keeps elsewhere.
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - keyPath: The optional property to set.
  ///   - executor: Where values are delivered; see ``bind(to:on:)``.
  /// - Returns: The disposable that ends the binding earlier.
  @MainActor
  @discardableResult
  public func bind<Target: AnyObject>(
    to target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value?>,
    on executor: Executor = .mainThread
  ) -> any Disposable {
    bind(to: Binder(target: target) { target, value in target[keyPath: keyPath] = value }, on: executor)
  }
}
