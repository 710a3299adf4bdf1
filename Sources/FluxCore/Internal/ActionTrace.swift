import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Bionic)
  import Bionic
#endif

/// What happened to one action on its way through a store's middleware, for a middleware that
/// asked to see it (``AnyMiddleware/tracingActions()``): the global dispatch it came from, the
/// middleware that held it and for how long, the one that cancelled it.
///
/// A store traces only when one of its own middleware asks; no other store makes one, and a
/// traced store makes one only for an action that comes from a global dispatch, or that a
/// middleware holds or cancels. Its hooks read it as ``current(for:)``, during `didCommit` and
/// `didCancel`.
///
/// The store writes a trace under its lock while the action is intercepted or held (a decision
/// from another thread included), and reads it on its drain once the action has left the
/// machine, after that lock: so the hooks see every write. The drain names the trace's store
/// (``during(_:of:_:)``) on its own thread, right before the hooks, when no other thread holds
/// the trace any more.
// `@unchecked Sendable`: every variable is written only under the lock of the store whose
// action this is, or by the drain that then runs the hooks, before the hooks that read it run
// (see above).
@usableFromInline
package final class ActionTrace: @unchecked Sendable {
  /// One middleware that held the action: it had not decided when its `intercept` returned.
  package struct Hold: Sendable {
    /// The type of the middleware, as wrapped in ``AnyMiddleware``.
    package let middleware: Any.Type
    /// From the call of its `intercept` to its decision (or to the release of its last
    /// ``Proceed``).
    package let nanoseconds: UInt64
  }

  /// The global dispatch (`Store<S>.actions`) the action came from: one number per global
  /// dispatch, the same for every store it reaches; `0` for a dispatch to one store.
  package let dispatch: UInt64
  /// The middleware that held the action, in the order they did.
  package private(set) var holds: [Hold] = []
  /// The middleware that cancelled the action, or `nil`.
  package private(set) var cancelledBy: Any.Type?
  /// The middleware holding the action now, and since when.
  private var holding: (middleware: Any.Type, since: UInt64)?
  /// The state of the store whose action this is, once its hooks run: the hooks it is current for.
  private var owner: ObjectIdentifier?

  @usableFromInline
  init(dispatch: UInt64) {
    self.dispatch = dispatch
  }

  /// The interception of `middleware`, called at `since`, returned undecided.
  @usableFromInline
  func hold(by middleware: Any.Type, since: UInt64) {
    holding = (middleware, since)
  }

  /// The middleware holding the action decided (or can no longer decide: `goesOn` false).
  @usableFromInline
  func endHold(goesOn: Bool) {
    guard let holding else { return }
    self.holding = nil
    holds.append(Hold(middleware: holding.middleware, nanoseconds: Self.now() &- holding.since))
    if !goesOn { cancelledBy = holding.middleware }
  }

  /// `middleware` cancelled the action during its interception.
  @usableFromInline
  func cancel(by middleware: Any.Type) {
    cancelledBy = middleware
  }

  /// The clock of holds: monotonic, in nanoseconds.
  @usableFromInline
  static func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
  }

  // MARK: The current trace

  /// The trace of the action whose `didCommit` or `didCancel` hooks run on this thread now, if
  /// its store traces it, for the store whose state is `state`; `nil` elsewhere.
  ///
  /// Scoped to one store: a hook that dispatches to another store on `.immediate` runs that
  /// store's hooks inside its own, and they read `nil` here (or their own action's trace), never
  /// the trace of the store that dispatched. The check is made by the reader, so that a store
  /// whose hooks read no trace pays nothing for it.
  package static func current(for state: AnyObject) -> ActionTrace? {
    guard let trace = current, trace.owner == ObjectIdentifier(state) else { return nil }
    return trace
  }

  /// The trace made current by the innermost ``during(_:of:_:)`` on this thread, whatever its
  /// store; hooks read ``current(for:)``.
  package static var current: ActionTrace? {
    guard let pointer = pthread_getspecific(key) else { return nil }
    // Set only by `during(_:_:)`, while the caller keeps the trace alive.
    return Unmanaged<ActionTrace>.fromOpaque(pointer).takeUnretainedValue()
  }

  /// Runs `body`, the hooks of the store whose state is `owner`, with `trace` as ``current``,
  /// then restores the one before (a hook may dispatch to another store on `.immediate`, whose
  /// hooks then run inside it, and see this trace as another store's).
  @usableFromInline
  static func during(_ trace: ActionTrace, of owner: ObjectIdentifier, _ body: () -> Void) {
    trace.owner = owner
    let previous = pthread_getspecific(key)
    set(Unmanaged.passUnretained(trace).toOpaque())
    withExtendedLifetime(trace, body)
    set(previous)
  }

  private static func set(_ pointer: UnsafeRawPointer?) {
    let status = pthread_setspecific(key, pointer)
    guard status == 0 else { fatalError("Flux: pthread_setspecific failed with status \(status).") }
  }

  /// The key of each thread's current trace; it holds no reference, so it needs no destructor.
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    guard status == 0 else { fatalError("Flux: pthread_key_create failed with status \(status).") }
    return key
  }()

  // MARK: Global dispatches

  private static let lock = Lock()
  // Guarded by `lock`.
  nonisolated(unsafe) private static var lastDispatch: UInt64 = 0

  /// A new number for a global dispatch that reaches a traced store: 1, 2, 3… in this process.
  @usableFromInline
  static func nextDispatch() -> UInt64 {
    lock.withLock {
      lastDispatch &+= 1
      return lastDispatch
    }
  }
}
