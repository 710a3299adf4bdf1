/// The disposable of one observer of a ``Sink`` or ``Variable``.
///
/// Holds its subject weakly, so an observer closure may capture its own disposable without a
/// retain cycle. Disposal is a binary search in the subject's observers, O(log n).
final class ObserverToken<Value>: Disposable, @unchecked Sendable {
  // Set once in `init`; weak loads are thread-safe.
  private weak var core: SubjectCore<Value>?
  private let key: UInt64

  init(core: SubjectCore<Value>, key: UInt64) {
    self.core = core
    self.key = key
  }

  var isDisposed: Bool {
    guard let core else { return true }
    return !core.contains(key)
  }

  func dispose() {
    _ = core?.remove(key)
  }
}

/// A disposable that was disposed before it was made: the answer to observing something that
/// has ended, or binding to a target that is gone.
struct DisposedDisposable: Disposable {
  var isDisposed: Bool { true }
  func dispose() {}
}
