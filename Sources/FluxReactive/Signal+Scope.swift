extension Signal {
  /// Calls `observer` with every value while `object` is alive.
  ///
  /// ```swift
  /// signal.observe(duringScopeOf: self) { value in
  ///   // Never called once `self` is deallocated.
  /// }
  /// ```
  ///
  /// Works on every platform without the Objective-C runtime: the observation holds `object`
  /// weakly and checks it before each call, keeping it alive during the call. The observer is
  /// never called after `object` is deallocated. Its closure (and what it captured) is released
  /// at the first value that arrives after that, when the source ends (its sink or variable is
  /// freed), or when the returned disposable is disposed, whichever comes first.
  ///
  /// `object` is `Sendable` (a main-actor class is, as a view or a view controller is): because
  /// a call keeps it alive, it is freed on the sending thread, at the end of that call, if every
  /// other reference to it goes during the call, and its `deinit` runs there. A class that is
  /// not `Sendable` could touch state of its own thread there, unchecked.
  ///
  /// A main-actor class is `Sendable`, but Swift runs its `deinit` (and the deinits of what it
  /// holds) wherever its last reference goes, unless it declares `isolated deinit`; and
  /// `observer` runs on the sending thread, so it cannot be a main-actor closure. To scope an
  /// observation to a main-actor object and keep the object on the main actor, deliver there
  /// first: every call, and so every reference the observation takes, is then on the main
  /// actor.
  ///
  /// ```swift
  /// signal.observe(on: .mainThread).observe(duringScopeOf: self) { value in
  ///   // On the main queue; `self` is never freed elsewhere by this observation.
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object whose lifetime bounds the observation.
  ///   - observer: Called with each value, on the sending thread.
  /// - Returns: The disposable that ends the observation earlier.
  @discardableResult
  public func observe(
    duringScopeOf object: some AnyObject & Sendable,
    _ observer: @escaping @Sendable (Value) -> Void
  ) -> any Disposable {
    let scope = LateDisposable()
    let object = WeakObject(object)
    scope.set(
      observe { value in
        guard let alive = object.object else {
          scope.dispose()
          return
        }
        withExtendedLifetime(alive) { observer(value) }
      })
    return scope
  }
}

/// A weak reference to a `Sendable` object, checked from the thread that delivers: loading it
/// there, and releasing it there, is sound because the object is `Sendable`.
struct WeakObject<Object: AnyObject & Sendable>: Sendable {
  weak var object: Object?

  init(_ object: Object) {
    self.object = object
  }
}
