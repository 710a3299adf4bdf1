extension Constant where Value: Sendable {
  /// The current value, then every change of the underlying variable, as an `AsyncStream` that
  /// keeps every value.
  ///
  /// The stream of ``signal``, buffered without limit (`.unbounded`) for the same reason as
  /// ``Variable/values``: the contract is "every change". A constant made from a fixed value
  /// yields that value and finishes; a view of a ``Variable`` yields its current value and
  /// every change, and finishes when the variable is freed. The observation is disposed when
  /// the iterating task is cancelled, and when the stream and its iterator are released (a
  /// `for await` loop over `constant.values` releases them as soon as it breaks or returns).
  ///
  /// ```swift
  /// let count = Variable(0)
  /// let constant = count.constant
  /// let values = constant.values  // buffers 0 now
  /// count.value = 1
  /// for await value in values {
  ///   print(value)
  ///   if value == 1 { break }
  /// }
  /// // prints "0"
  /// // prints "1"
  /// ```
  ///
  /// > Important: The current value is buffered on the thread that reads the property; each
  /// > change is buffered on the thread that sets the variable, inside the delivery, without
  /// > waiting. The loop body runs in the task that iterates. The observation is disposed on
  /// > the thread that ends the iteration: the one that releases the stream (the iterating
  /// > task, after a loop that breaks), or the caller of `cancel()` when the task is waiting (a
  /// > worker thread if a delivery is in flight on another thread then: waiting for it there
  /// > could deadlock); when the variable is freed, on a worker thread, which then finishes the
  /// > stream.
  ///
  /// - Returns: A stream of the current value and every later change.
  public var values: AsyncStream<Value> {
    signal.values
  }

  /// The current value, then every change of the underlying variable, as an `AsyncStream`
  /// whose buffer keeps what `bufferingPolicy` allows.
  ///
  /// Works as ``values``, which uses `.unbounded`, but with a buffer of your choice;
  /// `.bufferingNewest(1)` gives a loop the newest value after a burst of changes.
  ///
  /// ```swift
  /// for await count in store.computed.count.values(bufferingPolicy: .bufferingNewest(1)) {
  ///   label.text = String(count)
  /// }
  /// ```
  ///
  /// > Important: The current value is buffered on the thread that calls this function; each
  /// > change is buffered on the thread that sets the variable, inside the delivery, without
  /// > waiting. The loop body runs in the task that iterates. The observation is disposed on
  /// > the thread that ends the iteration: the one that releases the stream (the iterating
  /// > task, after a loop that breaks), or the caller of `cancel()` when the task is waiting (a
  /// > worker thread if a delivery is in flight on another thread then: waiting for it there
  /// > could deadlock); when the variable is freed, on a worker thread, which then finishes the
  /// > stream.
  ///
  /// - Parameters:
  ///   - bufferingPolicy: What the stream keeps while the loop is busy.
  /// - Returns: A stream of the current value and later changes, as `bufferingPolicy` keeps them.
  public func values(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy) -> AsyncStream<Value> {
    signal.values(bufferingPolicy: bufferingPolicy)
  }
}
