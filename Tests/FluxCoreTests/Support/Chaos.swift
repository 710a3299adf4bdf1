import Dispatch
import Foundation

@testable import FluxCore

/// One round: its stores, the `Proceed`s kept for later, and what it has seen go wrong.
final class Chaos: @unchecked Sendable {
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
  let stats = ChaosStats()
  let liveMiddleware = Counter()
  let liveMutations = Counter()
  private let nextID = Counter()
  private let lock = NSLock()
  // Everything below is guarded by `lock`.
  private var slots: [Entry?] = Array(repeating: nil, count: slotCount)
  private var kept: [Proceed] = []
  private var registrations: [SharedMiddlewareRegistration] = []
  private var failures: [String] = []
  private var watched: [ChaosWeak] = []
  private var storeCount = 0
  private var holderLogs: [ChaosHolderLog] = []
  private var isClosed = false
  private var committedKeys: Set<ChaosHolderLog.Key> = []

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
    _ = lock.withLock { committedKeys.insert(ChaosHolderLog.Key(store: store, action: action)) }
  }

  /// Actions committed without the hooks of a shared holder that intercepted them.
  var committedWithoutHooks: [ChaosHolderLog.Key] {
    let (logs, committed) = lock.withLock { (holderLogs, committedKeys) }
    return logs.flatMap { $0.unhooked.filter { committed.contains($0) } }
  }

  /// A token counted in `live`; a third of them take a step when freed: the deinit of what the
  /// user gave Flux runs user code, which must find no Flux lock held (rule 16).
  func token(_ live: Counter) -> ChaosToken {
    let seed = nextID.increment()
    guard seed % 3 == 0 else { return ChaosToken(live) }
    return ChaosToken(live) { self.nestedStep(seed: seed) }
  }

  func watch(_ object: AnyObject) {
    lock.withLock { if watched.count < 4_000 { watched.append(ChaosWeak(object)) } }
  }

  func keep(_ proceed: Proceed) {
    watch(proceed.ticket)
    stats.count("kept")
    lock.withLock { kept.append(proceed) }
  }

  // MARK: Steps

  static let usesMainQueue = ProcessInfo.processInfo.environment["FLUX_CHAOS_MAIN"] != nil

  func createStore(_ random: inout SplitMix64) {
    let reach = ChaosReach()
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
    // ChaosOnce the round tears down, a store made from a late commit goes at once.
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
    // ChaosOnce the round tears down, middleware added from a late commit goes at once.
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
    let log = ChaosHolderLog()
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
    default: chaosSpin(microseconds: Int.random(in: 0..<50, using: &random))
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

  /// ChaosOnce the stores still live have drained, each has committed every plain action it was
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
