extension Variable where Value: Sendable {
  /// The current value, then every change, as an `AsyncStream` that keeps every value.
  ///
  /// The stream of ``signal``: reading the property starts one observation at once, which
  /// buffers the current value first, then each change, with no change lost or doubled. The
  /// buffer has no limit (`.unbounded`) here too, although a variable is state and a loop that
  /// renders state only needs the newest value: the variable's contract is "every change", and
  /// a loop that folds or logs changes must see them all. A loop that wants only the latest
  /// value asks for it with ``values(bufferingPolicy:)`` and `.bufferingNewest(1)`.
  ///
  /// The observation is disposed when the iterating task is cancelled, and when the stream and
  /// its iterator are released: a `for await` loop over `variable.values` releases them as
  /// soon as it breaks or returns. The stream finishes, ending the loop, when the variable is
  /// freed.
  ///
  /// ```swift
  /// let count = Variable(0)
  /// let values = count.values  // buffers 0 now
  /// count.value = 1
  /// for await value in values {
  ///   print(value)
  ///   if value == 1 { break }  // the observation ends when `values` is released
  /// }
  /// // prints "0"
  /// // prints "1"
  /// ```
  ///
  /// > Important: The current value is buffered on the thread that reads the property; each
  /// > change is buffered on the thread that sets it, inside the delivery, without waiting. The
  /// > loop body runs in the task that iterates. The observation is disposed on the thread that
  /// > ends the iteration: the one that releases the stream (the iterating task, after a loop
  /// > that breaks), or the caller of `cancel()` when the task is waiting (a worker thread if a
  /// > delivery is in flight on another thread then: waiting for it there could deadlock); when
  /// > the variable is freed, on a worker thread, which then finishes the stream.
  ///
  /// - Returns: A stream of the current value and every later change.
  public var values: AsyncStream<Value> {
    signal.values
  }

  /// The current value, then every change, as an `AsyncStream` whose buffer keeps what
  /// `bufferingPolicy` allows.
  ///
  /// Works as ``values``, which uses `.unbounded`, but with a buffer of your choice.
  /// `.bufferingNewest(1)` suits a loop that renders state: it starts with the current value
  /// and, after a burst of changes, gets the newest one, never a stale one.
  ///
  /// ```swift
  /// for await state in viewState.values(bufferingPolicy: .bufferingNewest(1)) {
  ///   await render(state)  // skips the states set while it renders
  /// }
  /// ```
  ///
  /// > Important: The current value is buffered on the thread that calls this function; each
  /// > change is buffered on the thread that sets it, inside the delivery, without waiting. The
  /// > loop body runs in the task that iterates. The observation is disposed on the thread that
  /// > ends the iteration: the one that releases the stream (the iterating task, after a loop
  /// > that breaks), or the caller of `cancel()` when the task is waiting (a worker thread if a
  /// > delivery is in flight on another thread then: waiting for it there could deadlock); when
  /// > the variable is freed, on a worker thread, which then finishes the stream.
  ///
  /// - Parameters:
  ///   - bufferingPolicy: What the stream keeps while the loop is busy.
  /// - Returns: A stream of the current value and later changes, as `bufferingPolicy` keeps them.
  public func values(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy) -> AsyncStream<Value> {
    signal.values(bufferingPolicy: bufferingPolicy)
  }
}
