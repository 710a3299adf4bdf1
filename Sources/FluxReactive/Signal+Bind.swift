import FluxCore

extension Signal where Value: Sendable {
  /// Applies every value to `binder`'s target on `executor`, until the target is deallocated.
  ///
  /// ```swift
  /// isViewHidden.signal.bind(to: view.hiddenBinder)
  /// ```
  ///
  /// Binding to a binder whose target is already gone returns a disposed disposable.
  ///
  /// - Parameters:
  ///   - binder: Applies values to its target.
  ///   - executor: Where values are applied; the main queue by default.
  /// - Returns: The disposable that ends the binding earlier.
  @discardableResult
  public func bind(to binder: Binder<Value>, on executor: Executor = .mainThread) -> any Disposable {
    guard binder.isTargetAlive() else { return DisposedDisposable() }
    let binding = LateDisposable()
    let apply = UncheckedSendable(wrapped: binder.apply)
    binding.set(
      observe(on: executor).observe { value in
        if !apply.wrapped(value) { binding.dispose() }
      })
    return binding
  }

  /// Applies every value to `target` with `binding` on `executor`, until `target` is
  /// deallocated.
  ///
  /// ```swift
  /// text.signal.bind(to: label) { label, text in
  ///   label.text = text
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - executor: Where values are applied; the main queue by default.
  ///   - binding: Applies one value to `target`.
  /// - Returns: The disposable that ends the binding earlier.
  @discardableResult
  public func bind<Target: AnyObject>(
    to target: Target,
    on executor: Executor = .mainThread,
    binding: @escaping (Target, Value) -> Void
  ) -> any Disposable {
    bind(to: Binder(target: target, binding: binding), on: executor)
  }

  /// Sets `target[keyPath: keyPath]` to every value on `executor`, until `target` is
  /// deallocated.
  ///
  /// ```swift
  /// countText.signal.bind(to: label, \.text)
  /// ```
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - keyPath: The property to set.
  ///   - executor: Where values are applied; the main queue by default.
  /// - Returns: The disposable that ends the binding earlier.
  @discardableResult
  public func bind<Target: AnyObject>(
    to target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value>,
    on executor: Executor = .mainThread
  ) -> any Disposable {
    bind(to: Binder(target: target) { target, value in target[keyPath: keyPath] = value }, on: executor)
  }

  /// Sets the optional property `target[keyPath: keyPath]` to every value on `executor`, until
  /// `target` is deallocated.
  ///
  /// ```swift
  /// countText.signal.bind(to: label, \.text)  // label.text: String?
  /// ```
  ///
  /// - Parameters:
  ///   - target: The object to update; held weakly.
  ///   - keyPath: The optional property to set.
  ///   - executor: Where values are applied; the main queue by default.
  /// - Returns: The disposable that ends the binding earlier.
  @discardableResult
  public func bind<Target: AnyObject>(
    to target: Target,
    _ keyPath: ReferenceWritableKeyPath<Target, Value?>,
    on executor: Executor = .mainThread
  ) -> any Disposable {
    bind(to: Binder(target: target) { target, value in target[keyPath: keyPath] = value }, on: executor)
  }
}
