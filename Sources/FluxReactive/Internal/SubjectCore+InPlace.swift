import FluxCore

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

// An in-place change of a variable's value (`variable.value += 1`, `variable.value.append(x)`,
// `&variable.value` passed as an `inout` argument) goes through `Variable.value`'s `_modify`
// accessor, which makes it one step, under the delivery turn, with the value moved out of
// `current` meanwhile, and one change delivered when it ends. `modify` is the same change, with
// its body run between the two calls below. There is no read: Observation's `access` is not
// called, so a `+= 1` makes no registrar, and a set made that way pays nothing for Observation
// while nobody has read the value (see `SubjectCore+Observation`).
//
// A coroutine cannot take a closure, so the change is split in two calls that `_modify` makes
// around its `yield`: `beginInPlaceChange` takes `lock` (and tells Observation's trackers, if a
// read made a registrar) and moves the value out; `endInPlaceChange` moves it back, delivers
// it and gives `lock` back. `_modify` calls the second from a `defer`, which also runs when the
// caller's access ends by a throw: the value then keeps what the access left and that value
// is delivered, as for a `modify` body that throws (rule 5). Inside the access the value is
// out of `current` (and, for a value in a word, `modifyingThread` names this thread), so a read,
// set or observation of the same variable from there stops with the message of a reentrant
// `modify` body.

extension SubjectCore {
  /// Starts an in-place change: takes `lock` and moves the value out. Every call is followed by
  /// one ``endInPlaceChange(_:isObserved:)`` on the same thread.
  ///
  /// - Returns: The value, and whether Observation heard of the change's start.
  @inlinable
  func beginInPlaceChange() -> (value: Value, isObserved: Bool) {
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

  /// Ends an in-place change begun by ``beginInPlaceChange()``: stores `value`, delivers it once
  /// (queued when inside a delivery) and gives `lock` back.
  @inlinable
  func endInPlaceChange(_ value: __owned Value, isObserved: Bool) {
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
