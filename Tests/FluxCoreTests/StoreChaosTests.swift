import Dispatch
import Foundation
import Testing

@testable import FluxCore

// Random programs run on two to four threads at once against stores on `.immediate`, a serial
// queue, a concurrent queue and contexts of their own: dispatch to one store and to every store,
// with and without a waiter (`dispatchAndWait` too), middleware that holds `Proceed`s for other
// threads to decide or drop, shared middleware coming and going, mutations and hooks that
// dispatch again, and stores freed at any moment; commits also decide, free, create and dispatch.
// Rules 10, 11, 12, 14, 15 and 16 are checked as the program runs, every live store is checked to
// have committed what it was sent once it drains, and everything is checked freed once it
// settles. A failure prints the seed: FLUX_CHAOS_SEED=<seed> replays the random choices (not the
// threads' timing); FLUX_CHAOS_ROUNDS=<n> runs more rounds; FLUX_CHAOS_STATS=1 prints what ran;
// FLUX_CHAOS_MAIN=1 adds stores on `.mainThread` and on the main queue (which a runner must
// drain: Swift Testing's does).

/// What the middleware does with a chaos action.
private enum ChaosMode: CaseIterable {
  /// Every middleware proceeds at once: the action keeps its thread's dispatch order.
  case plain
  /// The store's middleware cancels it at once.
  case cancelNow
  /// The store's middleware keeps the `Proceed` for a thread to decide or drop.
  case holdOwn
  /// The shared middleware, when registered, keeps the `Proceed`.
  case holdShared
  /// The store's middleware decides on another thread, maybe while it still intercepts.
  case decideElsewhere
  /// The store's middleware drops the `Proceed` undecided: the action is cancelled.
  case dropProceed
}

/// What the mutation does once it has committed a chaos action.
private enum ChaosEcho {
  case none, sameStore, everyStore
}

private struct ChaosAction: Sendable {
  let id: Int
  /// The dispatcher whose order the action keeps: a thread, or a store's mutations; -1 for none.
  let stream: Int
  let sequence: Int
  let mode: ChaosMode
  let echo: ChaosEcho

  /// Whether its commit must come after the commits of earlier actions of its stream.
  var isOrdered: Bool { mode == .plain && stream >= 0 }
}

/// The state of a chaos store, which checks each commit against what came before it.
private final class ChaosState: State, @unchecked Sendable {
  typealias Action = ChaosAction
  typealias Mutations = ChaosMutations

  let chaos: Chaos
  let number: Int
  let hasOwnMiddleware: Bool
  private let lock = NSLock()
  // Everything below is guarded by `lock`.
  private var ownActions: Actions<ChaosState>?
  private var freed = false
  private var lateStarts = 0
  private var busy = false
  private var committed: Set<Int> = []
  private var cancelled: Set<Int> = []
  private var answeredFalse: Set<Int> = []
  private var lastSequence: [Int: Int] = [:]
  private var echoSequence = 0
  private var announced: Int?

  init(chaos: Chaos, number: Int, hasOwnMiddleware: Bool) {
    self.chaos = chaos
    self.number = number
    self.hasOwnMiddleware = hasOwnMiddleware
  }

  var stream: Int { 1_000 + number }

  func setOwnActions(_ actions: Actions<ChaosState>) { lock.withLock { ownActions = actions } }

  var ownActionsIfSet: Actions<ChaosState>? { lock.withLock { ownActions } }

  func markFreed() { lock.withLock { freed = true } }

  /// Starts a section that no other hook or commit of this store may overlap.
  func enter(_ what: String, _ action: ChaosAction) {
    let overlapped = lock.withLock {
      defer { busy = true }
      return busy
    }
    if overlapped { chaos.fail("store \(number): \(what) of \(action.id) overlapped another hook or commit") }
  }

  func leave() { lock.withLock { busy = false } }

  func willCommit(_ action: ChaosAction) { lock.withLock { announced = action.id } }

  /// Counts a commit or interception that began after the store was freed: only the one under
  /// way when it was freed may. Called with `lock` held.
  private func lateStart(_ what: String) -> [String] {
    chaos.stats.count("\(what)InFlightAtFree")
    lateStarts += 1
    return lateStarts > 1 ? ["\(lateStarts) commits or interceptions began after the store was freed"] : []
  }

  func beginInterception() {
    let problems = lock.withLock { freed ? lateStart("interception") : [] }
    for problem in problems { chaos.fail("store \(number): \(problem)") }
  }

  /// Checks a commit as it begins: one end per action, dispatch order, nothing after the free.
  func beginCommit(_ action: ChaosAction) {
    var problems: [String] = []
    lock.withLock {
      if freed { problems += lateStart("commit") }
      if hasOwnMiddleware && announced != action.id {
        problems.append("commit of \(action.id) without its willCommit (last: \(String(describing: announced)))")
      }
      announced = nil
      if !committed.insert(action.id).inserted { problems.append("action \(action.id) committed twice") }
      chaos.committed(store: number, action: action.id)
      if cancelled.contains(action.id) { problems.append("action \(action.id) committed after its cancellation") }
      if answeredFalse.contains(action.id) {
        problems.append("action \(action.id) committed after its waiter learned false")
      }
      if action.isOrdered {
        if let last = lastSequence[action.stream], last >= action.sequence {
          problems.append("stream \(action.stream): action \(action.sequence) committed after \(last)")
        }
        lastSequence[action.stream] = action.sequence
      }
    }
    for problem in problems { chaos.fail("store \(number): \(problem)") }
  }

  func hasCommitted(_ id: Int) -> Bool { lock.withLock { committed.contains(id) } }

  func didCancel(_ action: ChaosAction) {
    var problems: [String] = []
    lock.withLock {
      if committed.contains(action.id) { problems.append("action \(action.id) cancelled after its commit") }
      if !cancelled.insert(action.id).inserted { problems.append("action \(action.id) cancelled twice") }
    }
    for problem in problems { chaos.fail("store \(number): \(problem)") }
  }

  /// A waiter of this store's action learned `committed`.
  func answered(_ id: Int, _ committed: Bool) {
    let mismatch = lock.withLock {
      if !committed { answeredFalse.insert(id) }
      return self.committed.contains(id) != committed
    }
    if mismatch { chaos.fail("store \(number): waiter of \(id) learned \(committed), the commit log says otherwise") }
  }

  /// The next action the mutations dispatch, in this store's stream.
  func echo(of action: ChaosAction) -> (ChaosAction, Actions<ChaosState>?) {
    lock.withLock {
      echoSequence += 1
      let mode: ChaosMode = action.id % 4 == 0 ? .holdOwn : .plain
      return (chaos.action(stream: stream, sequence: echoSequence, mode: mode, echo: .none), ownActions)
    }
  }
}

private struct ChaosMutations: Mutations {
  let token: LiveToken

  func commit(action: ChaosAction, state: ChaosState) {
    state.enter("commit", action)
    state.beginCommit(action)
    state.chaos.stats.count(action.stream < 0 ? "commitUnordered" : action.isOrdered ? "commitOrdered" : "commitOther")
    if action.id % 13 == 0 { spin(microseconds: 20) }
    if action.id % 7 == 3 { state.chaos.nestedStep(seed: action.id) }
    if action.id % 5 == 0 { Chaos.touchLocks(state.ownActionsIfSet) }
    switch action.echo {
    case .none:
      break
    case .sameStore:
      let (echo, actions) = state.echo(of: action)
      actions?.dispatch(action: echo)
    case .everyStore:
      let (echo, _) = state.echo(of: action)
      Store<ChaosState>.actions.dispatch(action: echo)
    }
    state.leave()
  }
}

/// A store's own middleware: does with each action what its mode says.
private struct ChaosMiddleware: Middleware {
  let token: LiveToken
  let chaos: Chaos
  /// The first middleware of its store records the hooks; every one of them sees each.
  let isFirst: Bool
  /// The store's actions, for dispatching from a hook.
  let reach: Reach

  func intercept(action: ChaosAction, state: ChaosState, proceed: Proceed) {
    state.enter("intercept", action)
    defer { state.leave() }
    state.beginInterception()
    switch action.mode {
    case .plain, .holdShared:
      proceed()
    case .cancelNow:
      proceed.cancel()
    case .holdOwn:
      chaos.keep(proceed)
    case .decideElsewhere:
      let goesOn = action.id % 3 != 0
      DispatchQueue.global().async { goesOn ? proceed() : proceed.cancel() }
      // Sometimes still intercepting when the decision comes.
      if action.id % 2 == 0 { spin(microseconds: 30) }
    case .dropProceed:
      break
    }
  }

  func willCommit(action: ChaosAction, state: ChaosState) {
    state.enter("willCommit", action)
    if isFirst { state.willCommit(action) }
    state.leave()
  }

  func didCommit(action: ChaosAction, state: ChaosState) {
    state.enter("didCommit", action)
    state.leave()
  }

  func didCancel(action: ChaosAction, state: ChaosState) {
    state.enter("didCancel", action)
    if isFirst {
      state.didCancel(action)
      chaos.stats.count("cancel")
      if Chaos.isReleasing {
        chaos.fail("store \(state.number): didCancel of \(action.id) ran where its Proceed was released")
      }
      if action.id % 5 == 0 { Chaos.touchLocks(reach.actions) }
    }
    // A hook may dispatch: the action waits its turn.
    if isFirst && action.id % 3 == 0 {
      let (echo, _) = state.echo(of: action)
      reach.actions?.dispatch(action: echo)
    }
    state.leave()
  }
}

/// Shared middleware that keeps the `Proceed` of chaos actions in mode `holdShared`, and checks
/// that its `willCommit` sees exactly the committed actions it intercepted: an action finishes
/// with the middleware it started with. (Its `didCancel` also sees actions that an earlier
/// middleware cancelled before its turn.)
private struct ChaosHolder: SharedMiddleware {
  let token: LiveToken
  let chaos: Chaos
  let log: HolderLog

  func intercept(action: any Sendable, state: any State, proceed: Proceed) {
    guard let state = state as? ChaosState, let action = action as? ChaosAction else { return proceed() }
    if !log.intercepted(state.number, action.id) {
      chaos.fail("store \(state.number): shared middleware intercepted \(action.id) twice")
    }
    if action.mode == .holdShared {
      chaos.stats.count("keptByShared")
      chaos.keep(proceed)
    } else {
      proceed()
    }
  }

  func willCommit(action: any Sendable, state: any State) {
    hook("willCommit", action, state)
  }

  private func hook(_ name: String, _ action: any Sendable, _ state: any State) {
    guard let state = state as? ChaosState, let action = action as? ChaosAction else { return }
    if !log.hooked(state.number, action.id) {
      chaos.fail("store \(state.number): shared \(name) of \(action.id), which it never intercepted")
    }
  }
}

/// What one ``ChaosHolder`` saw; outlives it, for the check at the end of the round.
private final class HolderLog: @unchecked Sendable {
  struct Key: Hashable {
    let store: Int
    let action: Int
  }

  private let lock = NSLock()
  // Guarded by `lock`.
  private var intercepted: Set<Key> = []
  // Guarded by `lock`.
  private var hooked: Set<Key> = []

  /// Records an interception; `false` if it is the second of that action.
  func intercepted(_ store: Int, _ action: Int) -> Bool {
    lock.withLock { intercepted.insert(Key(store: store, action: action)).inserted }
  }

  /// Records a `willCommit`; `false` if the action was never intercepted.
  func hooked(_ store: Int, _ action: Int) -> Bool {
    let key = Key(store: store, action: action)
    return lock.withLock {
      hooked.insert(key)
      return intercepted.contains(key)
    }
  }

  /// The actions it intercepted and whose `willCommit` it never saw.
  var unhooked: Set<Key> { lock.withLock { intercepted.subtracting(hooked) } }
}

/// Shared middleware that keeps the default interception, so that lanes stay open under it.
private struct ChaosWatcher: SharedMiddleware {
  let token: LiveToken

  func didCommit(action: any Sendable, state: any State) {
    _ = token
  }
}

/// A flag that one caller takes.
private final class Once: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var taken = false

  /// `true` for the first caller only.
  func take() -> Bool {
    lock.withLock {
      defer { taken = true }
      return !taken
    }
  }
}

/// A store's actions, set once the store exists.
private final class Reach: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var stored: Actions<ChaosState>?

  var actions: Actions<ChaosState>? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

/// Counts of named events.
private final class Stats: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var counts: [String: Int] = [:]

  func count(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }

  func merge(into other: Stats) {
    for (name, count) in lock.withLock({ counts }) { other.lock.withLock { other.counts[name, default: 0] += count } }
  }

  var description: String {
    lock.withLock { counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
  }
}

/// Counts the live instances of what holds one, and may run user code when freed.
private final class LiveToken: Sendable {
  let live: Counter
  let onDeinit: (@Sendable () -> Void)?

  init(_ live: Counter, onDeinit: (@Sendable () -> Void)? = nil) {
    self.live = live
    self.onDeinit = onDeinit
    live.increment()
  }

  deinit {
    onDeinit?()
    live.decrement()
  }
}

/// A weak reference, to see an object freed.
private final class Weak: @unchecked Sendable {
  // Written once, in `init`.
  weak var object: AnyObject?

  init(_ object: AnyObject) {
    self.object = object
  }
}

/// Waits for one action's end: it must learn it exactly once.
private final class ChaosWaiter: @unchecked Sendable {
  let chaos: Chaos
  let id: Int
  /// The store waited on; `nil` for a global dispatch.
  weak var state: ChaosState?
  private let lock = NSLock()
  // Guarded by `lock`.
  private var answers = 0

  init(chaos: Chaos, id: Int, state: ChaosState?) {
    self.chaos = chaos
    self.id = id
    self.state = state
  }

  func answer(_ committed: Bool) {
    let count = lock.withLock {
      answers += 1
      return answers
    }
    guard count == 1 else { return chaos.fail("waiter of \(id) answered \(count) times") }
    chaos.stats.count(committed ? "answerTrue" : "answerFalse")
    chaos.waiting.decrement()
    state?.answered(id, committed)
  }
}

private func spin(microseconds: Int) {
  let end = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1_000
  while DispatchTime.now().uptimeNanoseconds < end {}
}

/// One round: its stores, the `Proceed`s kept for later, and what it has seen go wrong.
private final class Chaos: @unchecked Sendable {
  static let slotCount = 6

  /// A live store, reachable by the threads.
  final class Entry: @unchecked Sendable {
    // Guarded by the chaos `lock` until taken out of its slot; then owned by the taker.
    var store: Store<ChaosState>?
    let state: ChaosState
    let actions: Actions<ChaosState>
    private let lock = NSLock()
    // Guarded by `lock`.
    private var expected: [Int] = []

    /// Makes the store here, so that once this returns the entry holds its only reference.
    init(state: ChaosState, makeStore: () -> Store<ChaosState>) {
      let store = makeStore()
      self.store = store
      self.state = state
      self.actions = store.actions
    }

    /// Notes a plain action dispatched to the store, or to every store while it was live: once
    /// the store has drained, it must have committed it, unless it was freed.
    func expect(_ action: ChaosAction) {
      if action.mode == .plain { lock.withLock { expected.append(action.id) } }
    }

    var expectedActions: [Int] { lock.withLock { expected } }

  }

  let seed: UInt64
  let waiting = Counter()
  /// The `dispatchAndWait` tasks made and not yet started.
  let unstartedTasks = Counter()
  /// What happened, for a look at what a run covers (FLUX_CHAOS_STATS=1 prints it).
  let stats = Stats()
  let liveMiddleware = Counter()
  let liveMutations = Counter()
  private let nextID = Counter()
  private let lock = NSLock()
  // Everything below is guarded by `lock`.
  private var slots: [Entry?] = Array(repeating: nil, count: slotCount)
  private var kept: [Proceed] = []
  private var registrations: [SharedMiddlewareRegistration] = []
  private var failures: [String] = []
  private var watched: [Weak] = []
  private var storeCount = 0
  private var holderLogs: [HolderLog] = []
  private var isClosed = false
  private var committedKeys: Set<HolderLog.Key> = []

  init(seed: UInt64) {
    self.seed = seed
  }

  var failureList: [String] { lock.withLock { failures } }

  func fail(_ message: String) {
    lock.withLock { if failures.count < 50 { failures.append(message) } }
  }

  func action(stream: Int, sequence: Int, mode: ChaosMode, echo: ChaosEcho) -> ChaosAction {
    ChaosAction(id: nextID.increment(), stream: stream, sequence: sequence, mode: mode, echo: echo)
  }

  func committed(store: Int, action: Int) {
    _ = lock.withLock { committedKeys.insert(HolderLog.Key(store: store, action: action)) }
  }

  /// Actions committed without the hooks of a shared holder that intercepted them.
  var committedWithoutHooks: [HolderLog.Key] {
    let (logs, committed) = lock.withLock { (holderLogs, committedKeys) }
    return logs.flatMap { $0.unhooked.filter { committed.contains($0) } }
  }

  /// A token counted in `live`; a third of them take a step when freed: the deinit of what the
  /// user gave Flux runs user code, which must find no Flux lock held (rule 16).
  func token(_ live: Counter) -> LiveToken {
    let seed = nextID.increment()
    guard seed % 3 == 0 else { return LiveToken(live) }
    return LiveToken(live) { self.nestedStep(seed: seed) }
  }

  func watch(_ object: AnyObject) {
    lock.withLock { if watched.count < 4_000 { watched.append(Weak(object)) } }
  }

  func keep(_ proceed: Proceed) {
    watch(proceed.ticket)
    stats.count("kept")
    lock.withLock { kept.append(proceed) }
  }

  // MARK: Steps

  static let usesMainQueue = ProcessInfo.processInfo.environment["FLUX_CHAOS_MAIN"] != nil

  func createStore(_ random: inout SplitMix64) {
    let reach = Reach()
    let executor: Executor
    switch Int.random(in: 0..<12, using: &random) {
    case 0 where Self.usesMainQueue: executor = .mainThread
    case 1 where Self.usesMainQueue: executor = .queue(.main)
    case 0..<5: executor = .immediate
    case 5..<8: executor = .queue(DispatchQueue(label: "chaos.serial"))
    case 8..<11: executor = .queue(DispatchQueue(label: "chaos.concurrent", attributes: .concurrent))
    // Contexts of one's own: one that runs work inline without being `.immediate`, one that
    // hands it to a worker thread.
    // hands it to a worker thread, and holds the store's actions (a cycle the free must break).
    default:
      executor =
        random.chance(1, in: 2)
        ? Executor { $0() }
        : Executor { [reach] work in
          _ = reach
          DispatchQueue.global().async(execute: work)
        }
    }
    let middlewareCount = Int.random(in: 0..<3, using: &random)
    let number = lock.withLock {
      storeCount += 1
      return storeCount
    }
    let state = ChaosState(chaos: self, number: number, hasOwnMiddleware: middlewareCount > 0)
    let middlewares = (0..<middlewareCount).map { index in
      AnyMiddleware(ChaosMiddleware(token: token(liveMiddleware), chaos: self, isFirst: index == 0, reach: reach))
    }
    let echoesToItself = random.chance(1, in: 2)
    let entry = Entry(state: state) {
      let store = Store(
        state: state, mutations: ChaosMutations(token: token(liveMutations)), executor: executor,
        middlewares: middlewares)
      // The state then holds the store's core: a cycle the store's free must break.
      if echoesToItself { state.setOwnActions(store.actions) }
      // So do its middleware and its executor, through `reach`.
      reach.actions = store.actions
      watch(store.core)
      return store
    }
    watch(state)
    let slot = Int.random(in: 0..<Self.slotCount, using: &random)
    // Once the round tears down, a store made from a late commit goes at once.
    let replaced = lock.withLock { () -> Entry? in
      if isClosed { return entry }
      defer { slots[slot] = entry }
      return slots[slot]
    }
    if let replaced { free(replaced) }
  }

  func freeStore(_ random: inout SplitMix64) {
    let slot = Int.random(in: 0..<Self.slotCount, using: &random)
    if let entry = lock.withLock({ slots[slot].take() }) { free(entry) }
  }

  /// Drops the last reference to the entry's store, then marks it freed: a commit that begins
  /// after the mark began after the store's deinit.
  func free(_ entry: Entry) {
    entry.store = nil
    entry.state.markFreed()
  }

  func entry(_ random: inout SplitMix64) -> Entry? {
    let slot = Int.random(in: 0..<Self.slotCount, using: &random)
    return lock.withLock { slots[slot] }
  }

  func randomMode(_ random: inout SplitMix64) -> ChaosMode {
    random.chance(1, in: 2) ? .plain : ChaosMode.allCases.randomElement(using: &random)!
  }

  func randomEcho(_ random: inout SplitMix64) -> ChaosEcho {
    switch Int.random(in: 0..<10, using: &random) {
    case 0, 1: .sameStore
    case 2: .everyStore
    default: .none
    }
  }

  func dispatch(thread: Int, sequence: inout Int, _ random: inout SplitMix64) {
    guard let entry = entry(&random) else { return }
    let actions = entry.actions
    let count = random.chance(1, in: 4) ? Int.random(in: 2..<8, using: &random) : 1
    for _ in 0..<count {
      switch Int.random(in: 0..<20, using: &random) {
      case 0..<10:
        sequence += 1
        let action = action(stream: thread, sequence: sequence, mode: randomMode(&random), echo: randomEcho(&random))
        if thread >= 0 { entry.expect(action) }
        actions.dispatch(action: action)
      case 10..<17:
        sequence += 1
        let action = action(stream: thread, sequence: sequence, mode: randomMode(&random), echo: randomEcho(&random))
        let waiter = ChaosWaiter(chaos: self, id: action.id, state: entry.state)
        waiting.increment()
        if thread >= 0 { entry.expect(action) }
        actions.dispatch(action: action) { waiter.answer($0) }
      default:
        // From a task: not in this thread's order.
        let action = action(stream: -1, sequence: 0, mode: randomMode(&random), echo: .none)
        let waiter = ChaosWaiter(chaos: self, id: action.id, state: entry.state)
        waiting.increment()
        unstartedTasks.increment()
        Task.detached { [unstartedTasks] in
          unstartedTasks.decrement()
          waiter.answer(await actions.dispatchAndWait(action: action))
        }
      }
    }
    // Sometimes freed right after: with actions queued, held or committing.
    if random.chance(1, in: 12) {
      let slotted = lock.withLock { () -> Entry? in
        guard let index = slots.firstIndex(where: { $0 === entry }) else { return nil }
        return slots[index].take()
      }
      if let slotted { free(slotted) }
    }
  }

  func dispatchGlobally(thread: Int, sequence: inout Int, _ random: inout SplitMix64) {
    sequence += 1
    let action = action(stream: thread, sequence: sequence, mode: randomMode(&random), echo: randomEcho(&random))
    // Every store live now must receive it (rule 11).
    if thread >= 0 { for entry in lock.withLock({ slots.compactMap { $0 } }) { entry.expect(action) } }
    if random.chance(1, in: 3) {
      let waiter = ChaosWaiter(chaos: self, id: action.id, state: nil)
      waiting.increment()
      Store<ChaosState>.actions.dispatch(action: action) { waiter.answer($0) }
    } else {
      Store<ChaosState>.actions.dispatch(action: action)
    }
  }

  /// Decides, cancels or drops one kept `Proceed`, after the lock, here or on another thread.
  func decideOne(_ random: inout SplitMix64) {
    let index = Int.random(in: 0..<64, using: &random)
    guard let proceed = lock.withLock({ index < kept.count ? kept.remove(at: index) : nil }) else { return }
    let choice = Int.random(in: 0..<10, using: &random)
    let decide: @Sendable () -> Void = {
      switch choice {
      case 0..<6: proceed()
      case 6..<8: proceed.cancel()
      default: _ = proceed  // dropped undecided: cancelled
      }
    }
    if random.chance(1, in: 4) { DispatchQueue.global().async(execute: decide) } else { decide() }
  }

  /// Drops every kept `Proceed` undecided, under this round's lock: their cancel hooks must not
  /// run in this stack.
  func dropAllKept() {
    Self.whileReleasing { lock.withLock { kept.removeAll() } }
  }

  /// Runs `body` with the calling thread marked as releasing `Proceed`s.
  static func whileReleasing(_ body: () -> Void) {
    Thread.current.threadDictionary[releasingKey] = true
    body()
    Thread.current.threadDictionary[releasingKey] = nil
  }

  /// Whether the calling thread is releasing `Proceed`s: no cancel hook may run there.
  static var isReleasing: Bool { Thread.current.threadDictionary[releasingKey] != nil }

  private static let releasingKey = "StoreChaosTests.releasing"

  /// Takes the locks of the store and of its registry: a hook or commit that runs inside
  /// either (rule 16) deadlocks here, and the round reports threads that never returned.
  static func touchLocks(_ actions: Actions<ChaosState>?) {
    _ = actions?.reachesAStore
    _ = Store<ChaosState>.actions.reachesAStore
  }

  /// Adds or removes shared middleware that keeps the default interception: lanes reopen under
  /// it, so it may stay for long.
  func toggleShared(_ random: inout SplitMix64) {
    let registration = lock.withLock { () -> SharedMiddlewareRegistration? in
      guard registrations.count >= 2 || (!registrations.isEmpty && random.chance(1, in: 2)) else { return nil }
      return registrations.remove(at: Int.random(in: 0..<registrations.count, using: &random))
    }
    if let registration { return registration.remove() }
    let added = SharedMiddlewares.add(ChaosWatcher(token: token(liveMiddleware)))
    // Once the round tears down, middleware added from a late commit goes at once.
    let isLate = lock.withLock {
      if !isClosed { registrations.append(added) }
      return isClosed
    }
    if isLate { added.remove() }
  }

  /// Adds a shared middleware that holds actions, dispatches a few, and removes it: what it
  /// holds finishes through it. Only for a moment, because it intercepts every action of every
  /// store of the process, which shuts their lanes (other tests wait for theirs to open).
  func holdSharedBriefly(thread: Int, sequence: inout Int, _ random: inout SplitMix64) {
    let log = HolderLog()
    lock.withLock { holderLogs.append(log) }
    let registration = SharedMiddlewares.add(ChaosHolder(token: token(liveMiddleware), chaos: self, log: log))
    for _ in 0..<Int.random(in: 0..<4, using: &random) {
      if random.chance(1, in: 3) {
        dispatchGlobally(thread: thread, sequence: &sequence, &random)
      } else {
        dispatch(thread: thread, sequence: &sequence, &random)
      }
    }
    registration.remove()
  }

  func step(thread: Int, sequence: inout Int, _ random: inout SplitMix64) {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<12: createStore(&random)
    case 12..<18: freeStore(&random)
    case 18..<58: dispatch(thread: thread, sequence: &sequence, &random)
    case 58..<68: dispatchGlobally(thread: thread, sequence: &sequence, &random)
    case 68..<88: decideOne(&random)
    case 88..<90: dropAllKept()
    case 90..<92: toggleShared(&random)
    case 92..<94: holdSharedBriefly(thread: thread, sequence: &sequence, &random)
    case 94..<97: usleep(UInt32.random(in: 0..<200, using: &random))
    default: spin(microseconds: Int.random(in: 0..<50, using: &random))
    }
  }

  /// A step taken inside a commit or a deinit: decide a kept `Proceed`, free or make a store,
  /// dispatch, add or remove shared middleware.
  func nestedStep(seed: Int) {
    var random = SplitMix64(seed: self.seed ^ UInt64(seed))
    var sequence = 0
    switch Int.random(in: 0..<7, using: &random) {
    case 5: toggleShared(&random)
    case 6: holdSharedBriefly(thread: -1, sequence: &sequence, &random)
    case 0: decideOne(&random)
    case 1: freeStore(&random)
    case 2: createStore(&random)
    // Stream -1: actions dispatched from commits keep no thread's order.
    case 3: dispatch(thread: -1, sequence: &sequence, &random)
    default: dispatchGlobally(thread: -1, sequence: &sequence, &random)
    }
  }

  // MARK: Tear-down

  /// Once the stores still live have drained, each has committed every plain action it was
  /// sent: nothing was lost on the way.
  func checkLiveStoresCommittedEverything() async {
    let entries = lock.withLock { slots.compactMap { $0 } }
    for entry in entries {
      // Through the core: a reference to the store would keep it from being freed meanwhile.
      guard let core = entry.actions.core else { continue }
      guard await eventually({ core.isDrained }) else {
        fail("store \(entry.state.number) never drained")
        continue
      }
      let expected = entry.expectedActions
      for _ in expected { stats.count("expectedChecked") }
      let missing = expected.filter { !entry.state.hasCommitted($0) }
      // A late commit may have freed it meanwhile, dropping what was waiting.
      if !missing.isEmpty && !core.isStoreFreed {
        fail("store \(entry.state.number) never committed plain actions \(missing)")
      }
    }
  }

  /// Frees every store, decides or drops every kept `Proceed` (before or after), and removes
  /// the shared middleware.
  func tearDown(_ random: inout SplitMix64) {
    let decideFirst = random.chance(1, in: 2)
    if decideFirst { while lock.withLock({ !kept.isEmpty }) { decideOne(&random) } }
    let entries = lock.withLock {
      isClosed = true
      defer { slots = Array(repeating: nil, count: Self.slotCount) }
      return slots.compactMap { $0 }
    }
    for entry in entries { free(entry) }
    while lock.withLock({ !kept.isEmpty }) { decideOne(&random) }
    let removed = lock.withLock {
      defer { registrations = [] }
      return registrations
    }
    for registration in removed { registration.remove() }
  }

  var liveWatched: Int { lock.withLock { watched.filter { $0.object != nil }.count } }

  /// What is still alive of what was watched, by type.
  var liveWatchedTypes: String {
    lock.withLock { watched.compactMap { $0.object.map { "\(type(of: $0))" } }.joined(separator: ", ") }
  }
}

@Suite("Chaos: random programs on several threads")
struct StoreChaosTests {
  private static var baseSeed: UInt64 {
    if let text = ProcessInfo.processInfo.environment["FLUX_CHAOS_SEED"], let seed = UInt64(text) { return seed }
    return UInt64.random(in: 0..<UInt64.max)
  }

  private static var rounds: Int {
    ProcessInfo.processInfo.environment["FLUX_CHAOS_ROUNDS"].flatMap(Int.init) ?? 40
  }

  /// Runs `body(index)` on `count` threads of their own; `false` if they have not all returned
  /// within `seconds` (they are left behind). Waits without blocking a thread of the
  /// cooperative pool, which the rounds' `dispatchAndWait` tasks (and other tests) need.
  private static func runOnThreads(
    _ count: Int, seconds: Double, _ body: @escaping @Sendable (Int) -> Void
  ) async -> Bool {
    let finished = DispatchGroup()
    for index in 0..<count {
      finished.enter()
      Thread {
        body(index)
        finished.leave()
      }.start()
    }
    let outcome = Once()
    return await withCheckedContinuation { continuation in
      finished.notify(queue: .global()) { if outcome.take() { continuation.resume(returning: true) } }
      DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
        if outcome.take() { continuation.resume(returning: false) }
      }
    }
  }

  @Test("inv10, inv11, inv12, inv14, inv15, inv16: random programs on several threads keep every store rule")
  func inv14_randomProgramsKeepEveryRule() async {
    let base = Self.baseSeed
    let rounds = Self.rounds
    let stats = Stats()
    let printsStats = ProcessInfo.processInfo.environment["FLUX_CHAOS_STATS"] != nil
    defer { if printsStats { print("StoreChaosTests: \(stats.description)") } }
    print("StoreChaosTests: FLUX_CHAOS_SEED=\(base) FLUX_CHAOS_ROUNDS=\(rounds)")
    for round in 0..<rounds {
      let seed = base &+ UInt64(round) &* 0x1_0000
      let failures = await Self.runRound(seed: seed, stats: stats)
      #expect(
        failures.isEmpty,
        "FLUX_CHAOS_SEED=\(base), round \(round) (seed \(seed)):\n\(failures.joined(separator: "\n"))")
      if !failures.isEmpty { return }
    }
  }

  /// One round; returns what went wrong.
  private static func runRound(seed: UInt64, stats: Stats) async -> [String] {
    let chaos = Chaos(seed: seed)
    defer { chaos.stats.merge(into: stats) }
    var random = SplitMix64(seed: seed)
    let threads = Int.random(in: 2...4, using: &random)
    let steps = Int.random(in: 100..<250, using: &random)
    let returned = await runOnThreads(threads, seconds: 60) { thread in
      var random = SplitMix64(seed: seed &+ UInt64(thread) &+ 1)
      var sequence = 0
      for _ in 0..<steps { chaos.step(thread: thread, sequence: &sequence, &random) }
    }
    guard returned else { return chaos.failureList + ["threads still running after 60 s: a deadlock?"] }
    await chaos.checkLiveStoresCommittedEverything()
    chaos.tearDown(&random)
    if await !eventually({ chaos.waiting.value == 0 }) {
      chaos.fail(
        "\(chaos.waiting.value) waiters never answered (\(chaos.unstartedTasks.value) of their tasks never started)")
    }
    if await !eventually({ chaos.liveMiddleware.value == 0 }) {
      chaos.fail("\(chaos.liveMiddleware.value) middleware outlived their stores")
    }
    if await !eventually({ chaos.liveMutations.value == 0 }) {
      chaos.fail("\(chaos.liveMutations.value) mutations outlived their stores")
    }
    // An interception under way when its store was freed may still keep its Proceed.
    if await !eventually({
      chaos.dropAllKept()
      return chaos.liveWatched == 0
    }) {
      chaos.fail(
        "\(chaos.liveWatched) cores, states or Proceed tickets outlived their stores: \(chaos.liveWatchedTypes)")
    }
    let unhooked = chaos.committedWithoutHooks
    if !unhooked.isEmpty {
      chaos.fail("\(unhooked.count) actions committed without the hooks of the shared middleware they started with")
    }
    return chaos.failureList
  }
}
