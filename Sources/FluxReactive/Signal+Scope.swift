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
  /// > Important: Because a call keeps `object` alive, `object` is freed on the sending thread,
  /// > at the end of that call, if every other reference to it goes during the call: its
  /// > `deinit` then runs there. Keep a `deinit` that touches state shared with its own thread
  /// > out of objects observed this way, or send on that thread.
  ///
  /// - Parameters:
  ///   - object: The object whose lifetime bounds the observation.
  ///   - observer: Called with each value, on the sending thread.
  /// - Returns: The disposable that ends the observation earlier.
  @discardableResult
  public func observe(
    duringScopeOf object: AnyObject,
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

/// A weak reference to an object of any isolation, checked from the thread that delivers.
///
/// `@unchecked Sendable` is sound: the reference is only loaded (weak loads are atomic) and the
/// loaded object only kept alive for a call (reference counting is atomic); nothing reads or
/// writes the object's state through it.
struct WeakObject: @unchecked Sendable {
  weak var object: AnyObject?

  init(_ object: AnyObject) {
    self.object = object
  }
}
