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
  /// Values keep their order on an executor that keeps submission order (``Executor/mainThread``,
  /// a serial queue). Once the observation is disposed, values still waiting on the executor
  /// are dropped and the observer is released.
  ///
  /// - Parameter executor: Where observers run.
  /// - Returns: The rescheduled signal.
  public func observe(on executor: Executor) -> Signal<Value> {
    Signal { observer in
      let hop = ExecutorObservation(observer)
      hop.set(self.observe { value in executor.execute { hop.deliver(value) } })
      return hop
    }
  }
}

/// One observation moved to an executor: drops what is still queued once disposed.
final class ExecutorObservation<Value>: Disposable, @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`: `nil` once disposed.
  private var observer: ((Value) -> Void)?
  // Guarded by `lock`.
  private var upstream: (any Disposable)?

  init(_ observer: @escaping (Value) -> Void) {
    self.observer = observer
  }

  func set(_ disposable: any Disposable) {
    let accepted = lock.withLock {
      if observer == nil { return false }
      upstream = disposable
      return true
    }
    if !accepted { disposable.dispose() }
  }

  func deliver(_ value: Value) {
    guard let observer = lock.withLock({ observer }) else { return }
    observer(value)
  }

  var isDisposed: Bool {
    lock.withLock { observer == nil }
  }

  func dispose() {
    let (observer, upstream) = lock.withLock { (self.observer.take(), self.upstream.take()) }
    upstream?.dispose()
    _ = observer
  }
}
