extension Signal where Value: Sendable {
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
  /// Only for `Sendable` values: the mapped signal may be `Sendable` (a signal of `Int`, say)
  /// and observed from any thread, where its transform reads each value, the current one of a
  /// variable included.
  ///
  /// - Parameter transform: Applied to each value, on the sending thread.
  /// - Returns: The transformed signal.
  @inlinable
  public func map<Mapped>(_ transform: @escaping @Sendable (Value) -> Mapped) -> Signal<Mapped> {
    let source = source
    return Signal<Mapped>.forwarding { observer in
      Signal(source: source).observe { value in observer(transform(value)) }
    }
  }
}
