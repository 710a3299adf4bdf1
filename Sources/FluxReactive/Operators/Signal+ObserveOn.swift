import FluxCore

extension Signal where Value: Sendable {
  /// A signal that delivers each value on `executor`.
  ///
  /// ```swift
  /// sink.signal
  ///   .observe(on: .mainThread)
  ///   .observe { value in /* on the main queue */ }
  /// ```
  ///
  /// Values keep their order on an executor that keeps submission order (`Executor.mainThread`,
  /// a serial queue). Once the observation is disposed, values still waiting on the executor
  /// are dropped and the observer is released; a call running on another thread finishes
  /// before `dispose()` returns, so no call starts after it. Disposing from inside the
  /// observer ends the observation after the current call.
  ///
  /// > Important: So `dispose()` may wait for the observer running on the executor. Do not
  /// > dispose from code that call may itself wait for: from an observer of a sink that the
  /// > call sends to, say, while the call waits for that sink's delivery (a deadlock). Dispose
  /// > on the executor instead, or from inside the observer.
  ///
  /// On `.immediate` the result is this signal itself: values arrive synchronously on the
  /// sending thread, as they do without `observe(on:)`, with nothing allocated per value.
  ///
  /// - Parameter executor: Where observers run.
  /// - Returns: The rescheduled signal.
  public func observe(on executor: Executor) -> Signal<Value> {
    // On `.immediate` the upstream's own delivery already runs each call on the sending thread
    // and lets no call start once `dispose()` has returned: there is nothing to reschedule.
    if executor.isImmediate { return self }
    return Signal.forwarding { observer in
      let scheduled = ObserverGate(observer)
      let upstream = self.observe { value in executor.execute { scheduled.send(value) } }
      return GatedObservation(gate: scheduled, stop: upstream)
    }
  }
}
