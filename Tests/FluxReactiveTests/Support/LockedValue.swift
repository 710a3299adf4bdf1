import FluxCore

/// A value that several threads or tasks share, guarded by a lock.
final class LockedValue<Value>: @unchecked Sendable {
  private let lock = Lock()
  // Guarded by `lock`.
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with the value while holding the lock.
  func withLock<R>(_ body: (inout Value) -> R) -> R {
    lock.withLock { body(&value) }
  }

  /// A copy of the value.
  var current: Value {
    withLock { $0 }
  }
}
