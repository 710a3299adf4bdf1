import FluxCore

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

// `Variable.modify`: one atomic read-modify-write, under the delivery turn (and `valueLock`, for
// a value not in a word), with the value moved out of `current` while the body runs and one
// change delivered when it ends. There is no read: Observation's `access` is not called, so a
// `modify` makes no registrar, and a change made that way pays nothing for Observation while
// nobody has read the value (see `SubjectCore+Observation`).
//
// The value is moved out, not copied: the body holds the only reference to a copy-on-write
// payload, so `modify { $0.append(x) }` changes the array in place, in amortized constant time.
// That is also why the body's own work happens under the locks: an element the body removes is
// freed there, by the body (`modify { $0.removeAll() }`); a body that returns what it takes out
// (`modify { $0.popLast() }`) hands it to its caller, which frees it after the locks.
//
// The locks are held only while the body runs, and the body is synchronous: no lock is held
// across a suspension (rule 20). `Variable.value`'s in-place access (`value += 1`, `&value`
// passed as an `inout` argument) is not a `modify`: it may span an `await`, so it is a get and a
// set (`Variable.value`'s `_modify`, `valueForChange`).
//
// Inside the body the value is out of `current` (and, for a value in a word, `modifyingThread`
// names this thread), so a read, set or observation of the same variable from there stops with
// the message of a reentrant `modify` body. When the body throws, the value keeps what the body
// left, and that value is delivered (rule 5).

extension SubjectCore {
  /// Changes the current value in place, atomically, and delivers the result once.
  @inlinable
  func modify<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    // Destructured at once: a tuple kept whole would hold a second reference to the value for as
    // long as it lives, and the body's first change would copy the whole payload.
    var (value, isObserved) = beginModify()
    let result: R
    do {
      result = try body(&value)
    } catch {
      endModify(value, isObserved: isObserved)
      throw error
    }
    endModify(value, isObserved: isObserved)
    return result
  }

  /// Starts a `modify`: takes `lock` and moves the value out. Every call is followed by one
  /// ``endModify(_:isObserved:)`` on the same thread, with no suspension between them.
  ///
  /// - Returns: The value, and whether Observation heard of the change's start.
  @inlinable
  func beginModify() -> (value: Value, isObserved: Bool) {
    lock.lock()
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      if Self.usesWord {
        if _slowPath(current == nil) { Self.reentrantModify() }  // inside this thread's own change
        let isObserved = isObserved
        if _slowPath(isObserved) { valueWillChange() }  // Observation's trackers, before the change
        let value = current.take().unsafelyUnwrapped  // not `nil`: checked above, under `lock`
        modifyingThread.store(Self.currentThread, ordering: .relaxed)
        return (value, isObserved)
      }
    #endif
    let isObserved = beginChange()  // holds `valueLock` from here to the end of the change
    return (current.take().unsafelyUnwrapped, isObserved)  // not `nil`: `beginChange` checked
  }

  /// Ends a `modify` begun by ``beginModify()``: stores `value`, delivers it once (queued when
  /// inside a delivery) and gives `lock` back.
  @inlinable
  func endModify(_ value: __owned Value, isObserved: Bool) {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      if Self.usesWord {
        modifyingThread.store(0, ordering: .relaxed)
        current = value
        word.store(Self.bits(of: value), ordering: .releasing)
        let taken = sendLocked(value)
        if _slowPath(isObserved) { valueDidChange() }
        lock.unlock(releasing: taken)
        return
      }
    #endif
    current = value
    valueLock.unlock()
    let taken = sendLocked(value)
    if _slowPath(isObserved) { valueDidChange() }
    lock.unlock(releasing: taken)
  }
}
