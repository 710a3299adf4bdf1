extension Signal where Value: Sendable {
  /// A constant that holds the latest value of this signal while `owner` is alive, for
  /// Observation and SwiftUI to read.
  ///
  /// A signal has no current value, so Observation cannot track it; the constant returned has
  /// one, and reading its ``Constant/value`` inside `withObservationTracking` (or a SwiftUI
  /// `body`) tracks it like a ``Variable``'s. It starts with `initial` and takes each value the
  /// signal sends, until `owner` is freed; then it keeps the last one.
  ///
  /// ```swift
  /// final class Feed {
  ///   let announcements = Sink<String>()
  /// }
  ///
  /// @MainActor final class Banner {
  ///   private(set) var text = Constant("")
  ///
  ///   func follow(_ feed: Feed) {
  ///     text = feed.announcements.signal.observe(on: .mainThread)
  ///       .latest(startingWith: "", duringScopeOf: self)
  ///   }
  /// }
  /// ```
  ///
  /// The value changes on the thread that sends it, and Observation hears of the change there:
  /// for a SwiftUI view, deliver on the main thread first, with `observe(on: .mainThread)`.
  ///
  /// - Parameters:
  ///   - initial: The value until the signal sends one.
  ///   - owner: The object whose lifetime bounds the observation of the signal; `Sendable`, as
  ///     for ``observe(duringScopeOf:_:)``.
  /// - Returns: A constant holding the latest value.
  public func latest(startingWith initial: Value, duringScopeOf owner: some AnyObject & Sendable)
    -> Constant<Value>
  {
    let variable = Variable(initial)
    observe(duringScopeOf: owner) { variable.value = $0 }
    return variable.constant
  }
}
