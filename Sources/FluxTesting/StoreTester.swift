import Dispatch
import FluxCore

/// A store made for tests: dispatch an action and assert, in one call, what the store
/// committed, what middleware cancelled, and what the state reads afterwards.
///
/// ```swift
/// @Test func addingTwice() async {
///   let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
///   await tester.dispatch(.add(2), reading: \.count.value, equals: 2)
///   await tester.dispatch(.add(3)) { $0.count.value == 5 }
///   tester.finish()
/// }
/// ```
///
/// The tester makes a `Store` and installs, last in its middleware list, a
/// middleware that records every action it commits or cancels. Each assertion covers the
/// actions recorded since the previous one, exhaustively: an action the store committed that no
/// assertion names (one a mutation or a middleware dispatched, or a global dispatch) fails the
/// next assertion, and ``finish(fileID:filePath:line:column:)`` fails if any is left. So assert
/// from one task at a time: two assertions at once would split those actions between them.
///
/// A failed assertion names the action and shows what was expected against what happened. It
/// is reported at the caller's file and line, through Swift Testing's `Issue.record` inside a
/// Swift Testing test, and through `XCTFail` otherwise. Make the tester in the test's own task
/// or a child task: `Task.detached` runs outside the test, so a tester made there reports
/// through `XCTFail`, which a Swift Testing test never hears.
///
/// > Important: On `Executor.immediate` and on a ``ManualExecutor`` (which the tester runs
/// > before each assertion about actions; ``expect(reading:equals:fileID:filePath:line:column:)``
/// > reads the state as it is, without running it) every assertion is deterministic and
/// > single-threaded. (One drain comes from another thread: when a middleware lets go of an
/// > action's `Proceed` undecided, a worker thread asks for the drain that cancels it; the tester
/// > waits for that drain, and runs it.) Without a
/// > manual executor, an assertion that finds fewer actions than it expects waits for them (a
/// > commit on another thread, a held action that a middleware lets go later), then for the
/// > store's drain to end (actions already queued, the hooks of shared middleware, which run
/// > after the tester's recorder), for at most `timeout` seconds in all, then compares. It waits
/// > by sleeping, so on the main actor a store on the main queue commits meanwhile. An action
/// > that ends after the assertion (held, and cancelled by a middleware a moment later, say)
/// > fails the next assertion, or ``finish(fileID:filePath:line:column:)``.
public final class StoreTester<State: FluxCore.State>: Sendable where State.Action: Equatable {
  /// The store under test.
  public let store: Store<State>
  let recorder: TesterRecorder<State>
  let manual: ManualExecutor?
  let timeout: Double
  /// Whether the store's work runs on the main queue, so that waiting on the main queue for it
  /// would keep it from running.
  let runsOnMainQueue: Bool
  /// The test library whose test made this tester: its assertions fail there.
  let harness = Harness.current
  /// The session this tester replays a store of, if it does: ``init(session:mutations:middlewares:)``.
  let session: SessionProgress?

  /// Creates a store of `state` on `executor`, with `middlewares`, and records what it does.
  ///
  /// - Parameters:
  ///   - state: The state to test.
  ///   - mutations: Its mutations.
  ///   - executor: Where the store commits; `Executor.immediate` by default.
  ///   - middlewares: The store's own middleware, first given first; the tester's recorder
  ///     comes after them.
  ///   - timeout: How long, in seconds, an assertion waits for actions it expects that have not
  ///     ended yet: finite, and 0 or more.
  public init(
    state: State,
    mutations: State.Mutations,
    executor: Executor = .immediate,
    middlewares: [AnyMiddleware<State>] = [],
    timeout: Double = 5
  ) {
    guard timeout.isFinite && timeout >= 0 else {
      fatalError("StoreTester: timeout must be a finite number of seconds, 0 or more; it is \(timeout)")
    }
    self.recorder = TesterRecorder()
    self.store = Store(
      state: state, mutations: mutations, executor: executor, middlewares: middlewares + [AnyMiddleware(recorder)])
    self.manual = nil
    self.timeout = timeout
    self.runsOnMainQueue = executor.runsOnMainQueue
    self.session = nil
  }

  /// A tester of the store labelled `label` in a session: on `.immediate`, apart from global
  /// dispatch and shared middleware.
  init(session label: String, state: State, mutations: State.Mutations, middlewares: [AnyMiddleware<State>]) {
    self.recorder = TesterRecorder()
    self.store = Store(
      state: state, mutations: mutations, executor: .immediate,
      middlewares: middlewares + [AnyMiddleware(recorder).keepingStoreApart()])
    self.manual = nil
    self.timeout = 5
    self.runsOnMainQueue = false
    self.session = SessionProgress(label: label)
  }

  /// Creates a store of `state` that commits on `executor`, which the tester runs after each
  /// dispatch.
  ///
  /// ```swift
  /// let manual = ManualExecutor()
  /// let tester = StoreTester<CounterState>(state: .init(), mutations: .init(), executor: manual)
  /// tester.store.actions.increment()
  /// // nothing committed yet: manual.pendingCount == 1
  /// await tester.dispatch(.add(2), committed: [.increment, .add(2)])
  /// ```
  ///
  /// - Parameters:
  ///   - state: The state to test.
  ///   - mutations: Its mutations.
  ///   - executor: The executor the store commits on; the tester calls its
  ///     ``ManualExecutor/runAll()`` before each assertion about actions (not before
  ///     ``expect(reading:equals:fileID:filePath:line:column:)``, which reads the state as it is).
  ///   - middlewares: The store's own middleware, first given first; the tester's recorder
  ///     comes after them.
  public init(
    state: State,
    mutations: State.Mutations,
    executor: ManualExecutor,
    middlewares: [AnyMiddleware<State>] = []
  ) {
    self.recorder = TesterRecorder()
    self.store = Store(
      state: state, mutations: mutations, executor: executor.executor,
      middlewares: middlewares + [AnyMiddleware(recorder)])
    self.manual = executor
    self.timeout = 0
    self.runsOnMainQueue = false
    self.session = nil
  }

  /// Dispatches to the store under test, like `store.actions`, without asserting anything.
  public var actions: Actions<State> {
    store.actions
  }

  /// Reads the state of the store under test, like `store.computed`.
  public var computed: Computed<State> {
    store.computed
  }

  /// The uptime, in nanoseconds, at which a wait that starts now gives up. Saturates: a
  /// timeout of centuries waits for ever, without overflowing.
  var deadlineFromNow: UInt64 {
    let wait = timeout * 1e9 < Double(UInt64.max / 2) ? UInt64(timeout * 1e9) : UInt64.max / 2
    return DispatchTime.now().uptimeNanoseconds + wait
  }

  /// How long, in nanoseconds, a tester on a manual executor waits for a drain the store owes
  /// it (one a worker thread asks for) before it gives up: only work dropped from the executor
  /// (``ManualExecutor/discardAll()``) takes that long.
  static var owedDrainWait: UInt64 { 5_000_000_000 }

  /// Waits, blocking, for at most ``owedDrainWait``, until a drain the store owes the manual
  /// executor has been submitted to it, so that it is counted: an action whose `Proceed` a
  /// middleware let go undecided is cancelled by a drain that a worker thread asks for, a moment
  /// after. Returns at once when work waits there, or when the store owes nothing.
  func waitForOwedDrain(_ manual: ManualExecutor) {
    let deadline = DispatchTime.now().uptimeNanoseconds + Self.owedDrainWait
    let pause = DispatchSemaphore(value: 0)
    while manual.pendingCount == 0 && !store.isDrained && DispatchTime.now().uptimeNanoseconds < deadline {
      _ = pause.wait(timeout: .now() + .milliseconds(1))
    }
  }

  /// Suspends for a millisecond, in the caller's isolation; a cancelled task does not spin.
  private func pause(isolation: isolated (any Actor)?) async {
    await withCheckedContinuation(isolation: isolation) { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { continuation.resume() }
    }
  }

  /// Runs the manual executor, or waits until `count` records are there and the store's drain
  /// has ended (the hooks of shared middleware run after the recorder's), or the timeout
  /// passes; then takes every record.
  ///
  /// Waits by sleeping, never by blocking: on the main actor, a store on the main queue commits
  /// meanwhile.
  func settle(expecting count: Int, isolation: isolated (any Actor)?) async -> [TesterRecorder<State>.Record] {
    if let manual {
      manual.runAll()
      // A drain the store still owes: the one a worker thread asks for to cancel an action
      // whose `Proceed` a middleware let go undecided (or one another thread runs now).
      let deadline = DispatchTime.now().uptimeNanoseconds + Self.owedDrainWait
      while !store.isDrained && DispatchTime.now().uptimeNanoseconds < deadline {
        await pause(isolation: isolation)
        manual.runAll()
      }
    } else {
      let deadline = deadlineFromNow
      while recorder.count < count && DispatchTime.now().uptimeNanoseconds < deadline {
        try? await Task.sleep(nanoseconds: 1_000_000)
      }
      while !store.isDrained && DispatchTime.now().uptimeNanoseconds < deadline {
        try? await Task.sleep(nanoseconds: 1_000_000)
      }
    }
    return recorder.takeAll()
  }
}
