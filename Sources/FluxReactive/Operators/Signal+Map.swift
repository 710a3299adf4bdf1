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
  public func map<Mapped>(_ transform: @escaping (Value) -> Mapped) -> Signal<Mapped> {
    Signal<Mapped>.forwarding { observer in
      self.observe { value in observer(transform(value)) }
    }
  }
}
