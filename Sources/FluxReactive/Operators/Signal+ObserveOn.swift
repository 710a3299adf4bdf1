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
  /// are dropped and the observer is released.
  ///
  /// - Parameter executor: Where observers run.
  /// - Returns: The rescheduled signal.
  public func observe(on executor: Executor) -> Signal<Value> {
    Signal { observer in
      let scheduled = ScheduledObserver(observer)
      let upstream = self.observe { value in executor.execute { scheduled.deliver(value) } }
      return ScheduledObservation(scheduled: scheduled, upstream: upstream)
    }
  }
}

/// The observer of one observation moved to an executor.
///
/// Owned by the upstream observer closure and by the values queued on the executor, so it goes
/// (with the user's observer) when the source ends and nothing is queued, even while someone
/// keeps the disposable.
final class ScheduledObserver<Value>: @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`: `nil` once the observation is disposed.
  private var observer: ((Value) -> Void)?

  init(_ observer: @escaping (Value) -> Void) {
    self.observer = observer
  }

  /// Delivers `value` unless the observation was disposed meanwhile.
  func deliver(_ value: Value) {
    guard let observer = lock.withLock({ observer }) else { return }
    observer(value)
  }

  /// Drops the observer: values still queued are not delivered.
  func cancel() {
    let observer = lock.withLock { self.observer.take() }
    _ = observer  // released after the lock
  }
}

/// The disposable of an observation moved to an executor: drops what is still queued.
final class ScheduledObservation<Value>: Disposable, @unchecked Sendable {
  // Set once; weak loads are thread-safe.
  private weak var scheduled: ScheduledObserver<Value>?
  private let upstream: any Disposable
  private let lock = Lock()
  // Guarded by `lock`.
  private var disposed = false

  init(scheduled: ScheduledObserver<Value>, upstream: any Disposable) {
    self.scheduled = scheduled
    self.upstream = upstream
  }

  var isDisposed: Bool {
    lock.withLock { disposed } || upstream.isDisposed
  }

  func dispose() {
    lock.withLock { disposed = true }
    scheduled?.cancel()
    upstream.dispose()
  }
}
