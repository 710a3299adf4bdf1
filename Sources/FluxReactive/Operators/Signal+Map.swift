extension Signal {
  /// A signal of `transform` applied to each value.
  ///
  /// ```swift
  /// sink.signal
  ///   .map { "Value is \($0)" }
  ///   .observe { print($0) }
  /// sink.send(value: 100)
  /// // prints "Value is 100"
  /// ```
  ///
  /// Chained maps compose into one function per observer: no intermediate subject, no lock.
  ///
  /// - Parameter transform: Applied to each value, on the sending thread.
  /// - Returns: The transformed signal.
  @inlinable
  public func map<Mapped>(_ transform: @escaping @Sendable (Value) -> Mapped) -> Signal<Mapped> {
    let source = source  // `Sendable` whatever `Value` is, unlike `self`
    return Signal<Mapped>.forwarding { observer in
      Signal(source: source).observe { value in observer(transform(value)) }
    }
  }
}
