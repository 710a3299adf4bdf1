/// Holds a ``State``, commits actions to it through its ``Mutations``, and publishes it
/// through ``Computed``.
///
/// ```swift
/// let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .mainThread)
/// store.computed.countTextValues.observe { print($0) }
/// store.actions.increment()                // this store
/// Store<CounterState>.actions.increment()  // every live store of CounterState
/// ```
///
/// For state shared across an application, subclass it and keep one instance. Swift 6 asks a
/// subclass of an `@unchecked Sendable` class to restate the conformance:
///
/// ```swift
/// final class CounterStore: Store<CounterState>, @unchecked Sendable {
///   static let shared = CounterStore()
///
///   private init() {
///     super.init(state: .init(), mutations: .init(), executor: .queue(.global()))
///   }
/// }
/// ```
///
/// > Warning: `@unchecked Sendable` is a promise the compiler takes on trust, and the subclass
/// > makes it for everything it adds. Give a subclass only `let` properties of `Sendable` types
/// > (keep changing values in the state, changed by mutations), or guard each `var` with a
/// > lock. Swift cannot check an open class for you: even without the restatement, which it
/// > asks for with a warning, the subclass inherits the conformance.
///
/// > Important: Commits of one store never overlap and run in dispatch order, on the store's
/// > executor, whatever it is (a concurrent queue included); an action that a middleware holds
/// > back lets later ones pass, and is committed when it is let go. An action dispatched during a
/// > commit of the same store is committed after that commit ends; on ``Executor/immediate``
/// > still before the outer `dispatch` returns. When the store is freed, commits still waiting
/// > are dropped: none runs. Neither queued work nor the global dispatcher keeps a store alive.
open class Store<State: FluxCore.State>: @unchecked Sendable {
  // Every stored property is an immutable `let` of a Sendable type; the mutable parts live in
  // `StoreCore` and `StoreRegistry`, which guard them with their locks.

  /// Dispatches actions to this store only.
  public let actions: Actions<State>

  /// Reads this store's state.
  public let computed: Computed<State>

  // Internal, not private: tests look at its lane.
  let core: StoreCore<State>
  private let registry: StoreRegistry<State>
  private let registration: UInt64

  /// Creates a store of `state`, committing through `mutations` on `executor`.
  ///
  /// The store joins the stores reached by ``Store/actions-swift.type.property`` until it is
  /// freed.
  ///
  /// A state belongs to one store: give each store a state of its own. Two stores of one
  /// state commit to it at the same time.
  ///
  /// - Parameters:
  ///   - state: The state to manage.
  ///   - mutations: The mutations that commit actions to `state`.
  ///   - executor: Where commits, and the middleware hooks around them, run.
  ///   - middlewares: Middleware that sees every action of this store, first given first;
  ///     ``SharedMiddleware`` wraps it. None by default.
  public init(
    state: State,
    mutations: State.Mutations,
    executor: Executor,
    middlewares: [AnyMiddleware<State>] = []
  ) {
    let core = StoreCore(state: state, mutations: mutations, executor: executor, middlewares: middlewares)
    self.core = core
    self.actions = Actions(core: core)
    self.computed = Computed(state: state)
    (self.registry, self.registration) = Registries.register(core)
  }

  /// Whether nothing is under way in this store: no action waits, commits or is held by a
  /// middleware. For the test kit, at the end of a test.
  package var isSettled: Bool {
    core.isSettled
  }

  /// Whether no action waits or commits in this store; actions a middleware holds may remain.
  /// For the test kit, after an assertion.
  package var isDrained: Bool {
    core.isDrained
  }

  /// Whether this store has asked its executor for a drain that has not started. For the test
  /// kit, to tell an executor that never runs the store's work from a commit that takes long.
  package var isAwaitingExecutor: Bool {
    core.isAwaitingExecutor
  }

  deinit {
    registry.unregister(registration)
    core.cancel()
  }

  /// Dispatches actions to every live store of this state type (and no other), like an event
  /// bus.
  ///
  /// Each store commits the action on its own executor, under its own ordering rules. A store
  /// created while a global dispatch runs receives all of that action or none of it.
  ///
  /// A global dispatch hands the action to the stores one after another. If a commit made while
  /// that walk goes on dispatches globally to the same state type (inline, on `.immediate`, or
  /// on a store's queue, on another thread), the inner action may reach a store before the
  /// outer one does: the stores the outer walk has not reached yet may commit the inner action
  /// first. Each store still commits in the order actions reached it. For one order everywhere,
  /// dispatch the second action from the code that dispatched the first, once that call has
  /// returned.
  @inlinable
  public static var actions: Actions<State> {
    Actions(registry: StoreRegistry<State>.shared)
  }
}
