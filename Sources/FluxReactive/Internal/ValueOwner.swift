/// What keeps the value of a ``Variable`` or ``Constant``: the variable, each constant made
/// from it, and each signal of theirs hold it; the disposables of their observations do not.
///
/// The core holds the value, and the disposable of an observation holds the core, to remove its
/// observer from it. That disposable is `Sendable`, as every ``Disposable`` is, even when the
/// value is not, and it may outlive the variable. So the value does not stay with the core: when
/// the last variable, constant or signal that can read it goes, this owner lets go of it, there.
/// Each of those is `Sendable` only when the value is, so a value that is not goes on the thread
/// (or in the isolation) it belongs to, and a disposable sent elsewhere frees only the core, with
/// its observers' bookkeeping. A value that holds no references has nothing to let go of.
@usableFromInline
final class ValueOwner<Value> {
  /// The core whose value this owner keeps.
  @usableFromInline
  let core: SubjectCore<Value>

  @inlinable
  init(core: SubjectCore<Value>) {
    self.core = core
  }

  deinit {
    core.releaseValue()
  }
}

// A value that is `Sendable` may go on any thread.
extension ValueOwner: Sendable where Value: Sendable {}

extension SubjectCore {
  /// Lets go of the current value, once its owner has gone: nothing can read it any more, or
  /// set it, or observe it with its replay. Released after both locks.
  func releaseValue() {
    guard !_isPOD(Value.self) else { return }  // nothing to release: no deinit can run
    lock.lock()
    valueLock.lock()
    let value = current.take()
    valueLock.unlock()
    lock.unlock()
    withExtendedLifetime(value) {}  // released here, after the locks (rule 16)
  }
}
