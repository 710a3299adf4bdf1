import Dispatch

extension Signal where Value: Sendable {
  /// The values of this signal as an `AsyncStream` that keeps every value.
  ///
  /// Reading the property starts one observation of the signal at once; from then on each value
  /// is buffered until the loop takes it. The buffer has no limit (`.unbounded`), because a
  /// signal loses nothing between its source and its observers and a loop should not either:
  /// a loop that counts, logs or folds values sees each one, in order. Pass another policy to
  /// ``values(bufferingPolicy:)`` when only recent values matter.
  ///
  /// The observation is disposed when the iterating task is cancelled, and when the stream and
  /// its iterator are released: a `for await` loop over `signal.values` releases them as soon
  /// as it breaks or returns; a stream kept in a variable lives until the variable's scope
  /// ends. The stream finishes, ending the loop, when the signal releases its observer: when
  /// the ``Sink`` or ``Variable`` behind it is freed.
  ///
  /// ```swift
  /// let sink = Sink<Int>()
  /// let values = sink.signal.values  // observing from here on
  /// sink.send(value: 1)
  /// sink.send(value: 2)
  /// for await value in values {
  ///   print(value)
  ///   if value == 2 { break }  // the observation ends when `values` is released
  /// }
  /// // prints "1"
  /// // prints "2"
  /// ```
  ///
  /// > Important: The observer that buffers each value runs on the sending thread, inside the
  /// > delivery, and never waits. The loop body runs in the task that iterates. The observation
  /// > is disposed on the thread that ends the iteration: the one that releases the stream (the
  /// > iterating task, after a loop that breaks), or the caller of `cancel()` when the task is
  /// > waiting. Where that would wait, for a delivery in flight on another thread or for the
  /// > producer of a signal that is not a sink's or a variable's, a worker thread disposes it
  /// > instead: `cancel()` runs under a lock of the task that a delivery to the loop needs, so
  /// > waiting there could deadlock. When the source ends instead (it releases its observer),
  /// > the observation is disposed, and then the stream finished, on a worker thread: the source
  /// > may release its observer under a lock of its own, or in the middle of changing the
  /// > storage that held it, and disposing there would call back into it (a producer's
  /// > disposable).
  ///
  /// - Returns: A stream of every value sent after this call.
  public var values: AsyncStream<Value> {
    values(bufferingPolicy: .unbounded)
  }

  /// The values of this signal as an `AsyncStream` whose buffer keeps what `bufferingPolicy`
  /// allows.
  ///
  /// Works as ``values``, which uses `.unbounded`, but with a buffer of your choice for values
  /// that arrive faster than the loop takes them. `.bufferingNewest(1)` suits a loop that only
  /// needs the latest value, such as one that renders state: after a burst it gets the newest
  /// value, never a stale one. `.bufferingOldest(n)` drops what arrives while `n` values wait.
  ///
  /// ```swift
  /// let progress = Sink<Double>()
  /// for await fraction in progress.signal.values(bufferingPolicy: .bufferingNewest(1)) {
  ///   await render(fraction)  // skips the values sent while it renders
  /// }
  /// ```
  ///
  /// > Important: The observer that buffers each value runs on the sending thread, inside the
  /// > delivery, and never waits. The loop body runs in the task that iterates. The observation
  /// > is disposed on the thread that ends the iteration: the one that releases the stream (the
  /// > iterating task, after a loop that breaks), or the caller of `cancel()` when the task is
  /// > waiting. Where that would wait, for a delivery in flight on another thread or for the
  /// > producer of a signal that is not a sink's or a variable's, a worker thread disposes it
  /// > instead: `cancel()` runs under a lock of the task that a delivery to the loop needs, so
  /// > waiting there could deadlock. When the source ends instead (it releases its observer),
  /// > the observation is disposed, and then the stream finished, on a worker thread: the source
  /// > may release its observer under a lock of its own, or in the middle of changing the
  /// > storage that held it, and disposing there would call back into it (a producer's
  /// > disposable).
  ///
  /// - Parameters:
  ///   - bufferingPolicy: What the stream keeps while the loop is busy.
  /// - Returns: A stream of the values sent after this call, as `bufferingPolicy` keeps them.
  public func values(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy) -> AsyncStream<Value> {
    AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
      // Set before observing, so that an end of the stream at any later moment disposes the
      // observation, even one that comes while `observe` still runs.
      let observation = LateDisposable()
      continuation.onTermination = { _ in
        // `task.cancel()` calls this under the cancelled task's status lock, and a delivery to
        // this stream on another thread needs that lock to resume the waiting loop: waiting
        // here for that delivery would never end. So this disposes at once only what needs no
        // wait; anything else is disposed on a worker thread, which waits for the delivery once
        // `cancel()` has released the lock. The stream has ended by then: the values the
        // observer still gets go nowhere.
        if !observation.disposeWithoutWaiting() {
          DispatchQueue.global().async { observation.dispose() }
        }
      }
      let finisher = StreamFinisher(continuation, observation: observation)
      observation.set(observe { value in finisher.continuation.yield(value) })
    }
  }
}

/// Finishes a stream when the observer that feeds it is released: a signal releases its
/// observers when its source ends, and the loop over the stream should end then too.
///
/// The release may come from anywhere in the source: from inside a lock the source holds, or
/// from the middle of a change to the storage that held the observer (a producer clearing its
/// dictionary of observers, say). Finishing the stream there would dispose the observation there
/// (the stream's `onTermination`), which calls the producer's own disposable: a deadlock on its
/// lock, or an exclusivity violation on its storage. So the observation is disposed, and then the
/// stream finished, on a worker thread; the loop still ends only after the disposal. When the
/// stream ended first (cancelled or released), its `onTermination` is disposing the
/// observation, which is what released the observer: there is nothing left to do.
final class StreamFinisher<Value: Sendable>: Sendable {
  let continuation: AsyncStream<Value>.Continuation
  private let observation: LateDisposable

  init(_ continuation: AsyncStream<Value>.Continuation, observation: LateDisposable) {
    self.continuation = continuation
    self.observation = observation
  }

  deinit {
    if observation.hasStartedDisposing {
      continuation.finish()  // ended by the stream: `onTermination` has run already
      return
    }
    let continuation = self.continuation
    let observation = self.observation
    DispatchQueue.global().async {
      observation.dispose()
      continuation.finish()
    }
  }
}
