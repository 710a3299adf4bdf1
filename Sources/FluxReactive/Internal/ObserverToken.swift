/// The disposable of one observer of a ``Sink`` or ``Variable``: its subject and its key.
///
/// A struct of two words, so it fits the inline buffer of `any Disposable`: observing
/// allocates nothing beyond the observer's own closure. Disposal is a binary search in the
/// subject's observers, O(log n), and idempotent: a second removal finds nothing.
///
/// It holds its subject strongly. An observer closure may still capture its own disposable:
/// the subject keeps no reference to its ``Sink`` or ``Variable``, and when that owner is freed
/// it ends the subject, which releases every observer and so every such disposable. Holding a
/// disposable keeps only the ended subject's small core, never the owner, the observers or a
/// variable's value (``ValueOwner`` lets go of it where the variable and its constants and
/// signals go): the token is `Sendable` for any value, and may be freed on any thread.
@usableFromInline
struct ObserverToken<Value>: Disposable {
  // Both constant; the core guards its own state with its lock.
  @usableFromInline
  let core: SubjectCore<Value>
  @usableFromInline
  let key: UInt64

  @inlinable
  init(core: SubjectCore<Value>, key: UInt64) {
    self.core = core
    self.key = key
  }

  @usableFromInline
  var isDisposed: Bool {
    !core.contains(key)
  }

  @usableFromInline
  func dispose() {
    _ = core.specializedRemove(core, key)
  }
}

extension ObserverToken: PromptlyDisposedQuery, PromptlyDisposable {
  var isDisposedWithoutWaiting: Bool? {
    core.containsWithoutWaiting(key).map { !$0 }
  }

  func disposeWithoutWaiting() -> Bool {
    core.removeWithoutWaiting(key)
  }
}

/// A disposable that was disposed before it was made: the answer to observing something that
/// has ended, or binding to a target that is gone.
@usableFromInline
struct DisposedDisposable: PromptlyDisposable {
  @inlinable
  init() {}

  @usableFromInline
  var isDisposed: Bool { true }

  @usableFromInline
  func dispose() {}

  func disposeWithoutWaiting() -> Bool { true }
}
