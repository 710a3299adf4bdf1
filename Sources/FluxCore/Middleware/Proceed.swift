/// The one-shot decision of a middleware's interception: call it to let the action go on, or
/// ``cancel()`` it.
///
/// ```swift
/// func intercept(action: CartAction, state: CartState, proceed: Proceed) {
///   confirm { confirmed in confirmed ? proceed() : proceed.cancel() }
/// }
/// ```
///
/// Decide exactly once, now or later, from any thread: a decision made at any moment after
/// the interception began is honoured. A ``Proceed`` is a value: copies of it stand for the
/// same decision. Deciding a second time (through any copy) is a programming error and stops
/// the program with a message naming the mistake, even after the store is gone. Releasing
/// the last copy without deciding cancels the action; its `didCancel` hooks then run later on
/// the store's drain, never inside the code that released it. Deciding after the store was
/// freed does nothing.
///
/// > Important: A decision made after the interception returned resumes the action from the
/// > deciding call. When the store's executor runs work inline there (``Executor/immediate``,
/// > or ``Executor/mainThread`` decided on the main queue) and nothing else is committing, the
/// > following interceptions, the commit and the hooks run inside that call, before it
/// > returns. So decide with none of your own locks held that those hooks take: take the
/// > `Proceed` out under your lock, and decide after it.
public struct Proceed: Sendable {
  @usableFromInline
  let ticket: ProceedTicket
  /// The interception this decision belongs to.
  @usableFromInline
  let serial: UInt64

  @inlinable
  init(ticket: ProceedTicket, serial: UInt64) {
    self.ticket = ticket
    self.serial = serial
  }

  /// Lets the action go on to the next middleware, and then to the commit.
  public func callAsFunction() {
    decide(true)
  }

  /// Cancels the action: it is not committed, and every middleware's `didCancel` hook sees it.
  public func cancel() {
    decide(false)
  }

  /// Proceeds, for the default `intercept` that `key` names (``DefaultInterception`` or
  /// ``SharedDefaultInterception`` of a type): the store may then let later actions through
  /// the stage of that key without an interception.
  func proceedByDefault(of key: Any.Type) {
    decide(true, byDefaultOf: ObjectIdentifier(key))
  }

  private func decide(_ goesOn: Bool, byDefaultOf type: ObjectIdentifier? = nil) {
    // A decision during the interception (the common case) needs nothing generic: it is
    // recorded here, under the store's lock. Every other goes to the store's state machine.
    ticket.lock.lock()
    let recorded = ticket.recordDuringInterception(serial: serial, goesOn: goesOn, byDefaultOf: type)
    ticket.lock.unlock()
    if !recorded { ticket.target.decide(ticket, serial: serial, goesOn: goesOn) }
  }
}

/// The shared part of every copy of a ``Proceed``: where its decision goes, and how far the
/// interception it belongs to has got.
///
/// Only ``Proceed`` values refer to a ticket outside its store, so when its store finds it
/// uniquely referenced, nobody else can decide through it and the store reuses it for a later
/// interception (``StoreStateMachine/endInterception(_:_:)``).
@usableFromInline
final class ProceedTicket: @unchecked Sendable {
  @usableFromInline
  enum Phase {
    /// Ready for reuse.
    case idle
    /// The interception runs; no decision yet.
    case running
    /// Decided while the interception ran; the drain has not picked it up yet.
    case decided(Bool)
    /// The interception returned undecided: the action waits for this decision.
    case held
    /// Decided and done with.
    case done
  }

  /// The store core that decisions go to. Immutable.
  @usableFromInline
  let target: any ProceedTarget
  /// The lock of `target`. Immutable.
  @usableFromInline
  let lock: Lock
  // `serial` and `phase` are guarded by `lock`: they are part of the state machine of
  // `target`.
  @usableFromInline @exclusivity(unchecked)
  var serial: UInt64 = 0
  @usableFromInline @exclusivity(unchecked)
  var phase = Phase.idle
  /// The type whose default `intercept` made the decision during the interception, if one did.
  @usableFromInline @exclusivity(unchecked)
  var decidedByDefaultOf: ObjectIdentifier?

  @usableFromInline
  init(target: any ProceedTarget, lock: Lock) {
    self.target = target
    self.lock = lock
  }

  /// The transition `running → decided` of the state machine (`StoreStateMachine`): records a
  /// decision made for `serial` while its interception runs. `false` if the interception is
  /// not running any more (or the ticket serves another one now). Called with `lock` held.
  @usableFromInline
  func recordDuringInterception(serial: UInt64, goesOn: Bool, byDefaultOf type: ObjectIdentifier? = nil) -> Bool {
    guard self.serial == serial, case .running = phase else { return false }
    phase = .decided(goesOn)
    decidedByDefaultOf = type
    return true
  }

  deinit {
    // Nobody else refers to this ticket now, so its fields can be read without the lock.
    if case .held = phase { target.abandon(serial: serial) }
  }
}

/// What a ``Proceed`` reports its decision to: a store's core.
@usableFromInline
protocol ProceedTarget: AnyObject, Sendable {
  /// The lock that guards the target's state machine, and so its tickets.
  var lock: Lock { get }
  /// A decision made through a copy of a ``Proceed`` for `serial`.
  func decide(_ ticket: ProceedTicket, serial: UInt64, goesOn: Bool)
  /// The last copy of an undecided, held ``Proceed`` for `serial` is gone.
  func abandon(serial: UInt64)
}
