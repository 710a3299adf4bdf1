import Dispatch
import FluxCore

/// Runs work on the main queue, synchronously: inline when already there, otherwise waiting
/// for the main queue to run it.
///
/// The board's stores have main-actor observers (the board follows its own store), so their
/// commits must run on the main queue, and a test's checks need them done when a command
/// returns. `.mainThread` would enqueue behind the main-queue work of every other test of the
/// process; this runs at once, and a replay run off the main actor, whose `dispatchAndWait`
/// dispatches from the cooperative pool, still commits on the main queue.
let mainQueueNow: Executor = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return Executor { work in
    if DispatchQueue.getSpecific(key: key) == true { work() } else { DispatchQueue.main.sync(execute: work) }
  }
}()
