/// Something that can be ended, usually an observation of a ``Signal``.
///
/// ```swift
/// let disposable = signal.observe { value in
///   // Not called after `dispose()`.
/// }
/// disposable.dispose()
/// ```
///
/// > Important: ``dispose()`` is idempotent and may be called from any thread. Once it has
/// > returned, the observation delivers nothing more; called from inside a delivery, the
/// > disposed observer gets nothing more from that delivery either. That holds for every
/// > disposable Flux returns, and for a ``DisposableScope``; an ``AnyDisposable`` does what its
/// > closure does, and a second call while its first still runs the closure returns at once.
public protocol Disposable: Sendable {
  /// Whether ``dispose()`` has taken effect.
  var isDisposed: Bool { get }

  /// Ends what this disposable stands for. Calling it again does nothing.
  func dispose()
}

/// A disposable whose ``Disposable/isDisposed`` may wait for a lock that another thread holds
/// for long (a sink's delivery turn, which runs observers), and that can also answer without
/// waiting when it knows.
///
/// A ``DisposableScope`` asks through this when it decides what to keep, so that adding to a
/// scope never waits for the delivery of an unrelated sink on another thread (which could be
/// waiting for the caller: a deadlock).
protocol PromptlyDisposedQuery: Disposable {
  /// `true` if disposed, `false` if not, `nil` if finding out would wait for another thread.
  var isDisposedWithoutWaiting: Bool? { get }
}

/// A disposable that can also be disposed only if that waits for no other thread.
///
/// For callers that may hold a lock a delivery needs: a `values` stream's `onTermination` runs,
/// on `task.cancel()`, under the cancelled task's status lock, which a delivery that yields to
/// the stream takes to resume the task. Waiting there for that delivery would never end.
protocol PromptlyDisposable: Disposable {
  /// Disposes at once and returns `true` if that waits for no other thread (disposed already
  /// counts); otherwise does nothing and returns `false`.
  func disposeWithoutWaiting() -> Bool
}

extension Disposable {
  /// Whether this disposable is surely disposed, found without waiting for a delivery on
  /// another thread: `false` when that would wait.
  var isSurelyDisposed: Bool {
    if let query = self as? any PromptlyDisposedQuery { return query.isDisposedWithoutWaiting == true }
    return isDisposed
  }
}
