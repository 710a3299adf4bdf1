import Dispatch
import FluxCore

/// A closure isolated to the main actor, whose last reference goes on the main actor.
///
/// Swift lets a main-actor closure capture plain, non-`Sendable` objects of the main actor's
/// region: it only ever runs there, so it is `Sendable`. But a closure is freed where its last
/// reference goes, and its captures' deinits run there. Flux keeps the closures given to
/// ``Signal/observe(on:_:)``, ``Binder`` and the bindings inside observers that any thread may
/// let go of (the thread that disposes, or that frees the sink). Such an observer holds this box
/// instead of the closure: when the box goes off the main queue, it hands the closure to the
/// main queue, which lets go of it there, as a block of its own, with no lock of Flux held
/// (rules 7 and 16). A box that goes on the main queue lets go of the closure at once.
///
/// A closure handed over goes once the main queue runs: a program that never runs it (no
/// `dispatchMain()`, no run loop) keeps it, as it keeps the values waiting for such a closure.
final class MainActorReleased<Payload: Sendable>: @unchecked Sendable {
  // `@unchecked Sendable`: `stored` is written by `init`, then read (on the main actor) while
  // the box lives, and emptied by `deinit`, which runs after every other use of the box; so no
  // two accesses overlap, and the dynamic exclusivity check would only cost each call.
  @exclusivity(unchecked) private var stored: Payload?

  init(_ payload: Payload) {
    stored = payload
  }

  /// The closure; only ever called on the main actor.
  var payload: Payload {
    stored.unsafelyUnwrapped  // set by `init`, emptied only by `deinit`
  }

  deinit {
    guard !MainQueue.shared.isOnMainQueue else { return }  // `stored` goes right after this
    // Moved, not copied, into the handoff: once the main queue may run it, this thread holds
    // no reference to the closure, so the main queue's is the last one, however soon it runs.
    let handoff = MainQueueHandoff(stored.take().unsafelyUnwrapped)
    DispatchQueue.main.async { handoff.release() }
  }
}

/// Carries a closure to the main queue and lets go of it there.
///
/// The block that carries it may itself be freed on either side (the thread that enqueued it
/// drops its reference after the main queue may have run it), so the block holds this box, and
/// the closure goes in ``release()``, on the main queue, whoever frees the box.
private final class MainQueueHandoff<Payload: Sendable>: @unchecked Sendable {
  // `@unchecked Sendable`: `payload` is written by `init`, before the box is handed to the main
  // queue, and then only by `release()`, on the main queue: the enqueue orders the two.
  private var payload: Payload?

  init(_ payload: Payload) {
    self.payload = payload
  }

  /// Lets go of the closure; called on the main queue.
  func release() {
    let payload = payload.take()
    withExtendedLifetime(payload) {}  // the last reference goes here, on the main queue
  }
}
