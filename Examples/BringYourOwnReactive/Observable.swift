import Foundation

/// A value that tells its observers about every change: the whole reactive layer this program
/// needs, in forty lines. FluxCore asks nothing of it; any reactive library would do.
///
/// Observers are called after the lock, so that an observer never waits for it: sets must not
/// overlap (a store's commits never do), and an observer must not set the value it observes.
/// An `AsyncStream` needs this: `task.cancel()` stops the observation while it holds a lock of
/// the task, which a `yield` to that task waits for.
final class Observable<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var current: Value
  // Guarded by `lock`.
  private var observers: [Int: @Sendable (Value) -> Void] = [:]
  // Guarded by `lock`.
  private var nextKey = 0

  init(_ value: Value) {
    current = value
  }

  var value: Value {
    get { lock.withLock { current } }
    set {
      let observers = lock.withLock {
        current = newValue
        return self.observers.keys.sorted().compactMap { self.observers[$0] }
      }
      for observer in observers { observer(newValue) }
    }
  }

  /// Calls `observer` with the current value, then with every change.
  ///
  /// - Returns: A function that stops the observation.
  func observe(_ observer: @escaping @Sendable (Value) -> Void) -> @Sendable () -> Void {
    let key = lock.withLock {
      let key = nextKey
      nextKey += 1
      observers[key] = observer
      observer(current)
      return key
    }
    return { [weak self] in
      guard let self else { return }
      _ = lock.withLock { observers.removeValue(forKey: key) }
    }
  }

  /// How many observers are attached, for the program to show that they are released.
  var observerCount: Int {
    lock.withLock { observers.count }
  }

  /// The current value, then every change, as an `AsyncStream`. The observation stops when
  /// the loop that reads it ends or its task is cancelled.
  var values: AsyncStream<Value> {
    AsyncStream { continuation in
      let stop = observe { continuation.yield($0) }
      continuation.onTermination = { _ in stop() }
    }
  }
}
