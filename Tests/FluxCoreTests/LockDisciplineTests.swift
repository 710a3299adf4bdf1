import Dispatch
import Foundation
import Testing

@testable import FluxCore

/// An object whose deinit runs a probe.
final class Canary: @unchecked Sendable {
  let onDeinit: @Sendable () -> Void
  init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
  deinit { onDeinit() }
}

final class CanaryState<Tag>: State, @unchecked Sendable {
  typealias Action = Int
  typealias Mutations = CanaryMutations<Tag>
  let committed = Recorder<Int>()
}

/// Mutations that hold a user object (a dependency, say).
struct CanaryMutations<Tag>: Mutations {
  let payload: (any AnyObject & Sendable)?
  init(_ payload: (any AnyObject & Sendable)? = nil) { self.payload = payload }
  func commit(action: Int, state: CanaryState<Tag>) { state.committed.append(action) }
}

struct NoopShared: SharedMiddleware {}

/// From inside a deinit: can another thread create a store right now? It cannot while this
/// thread holds the process-wide registry lock (`Registries.lock`).
func processWideLockIsFree(seconds: Double = 5) -> Bool {
  returnsInTime(seconds: seconds) {
    _ = Store(state: LogState<LockDisciplineTests.Probe>(), mutations: .init(), executor: .immediate)
  }
}

@Suite("User code and Flux locks", .serialized)
struct LockDisciplineTests {
  enum Probe {}
  enum SetSharedSnapshot {}
  enum MutationsLeak {}
  enum ExecutorLeak {}
  enum MiddlewareNoLeak {}
  enum FreedByDrain {}
  enum CommitNow {}

  /// Dispatches to a store's kept actions from its deinit, then signals.
  final class DispatchesWhenFreed<Tag>: @unchecked Sendable {
    // Set once, before the store is used.
    nonisolated(unsafe) var actions: Actions<LogState<Tag>>?
    let done: DispatchSemaphore

    init(_ done: DispatchSemaphore) {
      self.done = done
    }

    deinit {
      actions?.dispatch(action: 9)
      done.signal()
    }
  }

  @Test("inv16: the state a late drain lets go of is released after the store's lock: its deinit may dispatch there")
  func inv16_stateReleasedByTheDrainOutsideTheLock() {
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    var store: Store<LogState<FreedByDrain>>?
    do {
      let payload = DispatchesWhenFreed<FreedByDrain>(done)
      let state = LogState<FreedByDrain> { [payload] action in
        _ = payload
        if action == 1 {
          entered.signal()
          resume.wait()
        }
      }
      store = Store(state: state, mutations: .init(), executor: .queue(DispatchQueue(label: "drain")))
      payload.actions = store?.actions
    }
    store?.actions.dispatch(action: 1)
    entered.wait()
    store = nil  // the running drain owns the state now
    resume.signal()  // the drain ends and lets the state go
    #expect(done.wait(timeout: .now() + 10) == .success, "the state's deinit ran under the store's lock")
  }

  @Test("inv16: a commit made by a dispatch that found the lane closed runs outside the store's lock")
  func inv16_commitNowOutsideTheLock() {
    let store = Store(state: LogState<CommitNow>(), mutations: .init(), executor: .immediate)
    let actions = store.actions
    store.computed.state.hook = { action in
      if action < 1_000_000 { actions.dispatch(action: action + 1_000_000) }  // nested: waits for this commit
    }
    let stop = DeallocFlag()
    Thread {
      // Takes and releases the store's lock again and again: a dispatch meanwhile finds the
      // lane closed, takes the lock, and commits as `commitNow`.
      while !stop.isFreed { _ = store.isSettled }
    }.start()
    let finished = returnsInTime(seconds: 20) {
      for action in 0..<20_000 { actions.dispatch(action: action) }
    }
    stop.markFreed()
    #expect(finished, "a commit ran under the store's lock, and its nested dispatch waited for that lock")
    #expect(waitUntil { store.computed.state.committed.values.count == 40_000 })
  }

  // MARK: A core freed while the shared middleware list is broadcast

  @Test("inv16: a store freed while shared middleware is added lets its core go outside the process-wide lock")
  func inv16_coreFreedUnderProcessWideLockDeterministic() {
    let underLock = Recorder<Bool>()
    var victim: Store<CanaryState<SetSharedSnapshot>>? = Store(
      state: .init(),
      mutations: .init(
        Canary {
          underLock.append(!processWideLockIsFree())
        }),
      executor: .immediate)
    let filler = Store(state: CanaryState<SetSharedSnapshot>(), mutations: .init(), executor: .immediate)

    // Stands for the broadcasting thread being preempted at the filler's core (after it took
    // its snapshot of this registry).
    filler.core.lock.lock()
    let added = DispatchSemaphore(value: 0)
    let registration = Box<SharedMiddlewareRegistration?>(nil)
    let t = Thread {
      registration.value = SharedMiddlewares.add(NoopShared())
      added.signal()
    }
    t.start()
    usleep(300_000)  // the broadcaster is now waiting for the filler's core lock
    // Freed on a thread of its own, which then may wait for the broadcaster: it unregisters
    // (the registry's lock is free) and cancels, while the broadcaster's snapshot keeps the core.
    let freed = DispatchSemaphore(value: 0)
    let held = Box(victim)
    victim = nil
    _ = victim
    Thread {
      held.value = nil
      freed.signal()
    }.start()
    usleep(100_000)
    filler.core.lock.unlock()
    added.wait()
    freed.wait()
    registration.value?.remove()
    #expect(waitUntil { !underLock.values.isEmpty })
    #expect(underLock.values == [false], "the mutations' deinit ran under the process-wide registry lock")
    _ = filler
  }

  @Test("inv16: the mutations of a store freed while shared middleware is added may create a store in their deinit")
  func inv16_deadlock() {
    enum Other {}
    var victim: Store<CanaryState<SetSharedSnapshot>>? = Store(
      state: .init(),
      mutations: .init(Canary { _ = Store(state: LogState<Other>(), mutations: .init(), executor: .immediate) }),
      executor: .immediate)
    let filler = Store(state: CanaryState<SetSharedSnapshot>(), mutations: .init(), executor: .immediate)
    filler.core.lock.lock()  // the broadcaster is preempted at the filler's core
    let added = DispatchSemaphore(value: 0)
    // Removed at the end: shared middleware left registered reaches every later store.
    let registration = Box<SharedMiddlewareRegistration?>(nil)
    Thread {
      registration.value = SharedMiddlewares.add(NoopShared())
      added.signal()
    }.start()
    usleep(300_000)
    let held = Box(victim)
    victim = nil
    Thread { held.value = nil }.start()  // may wait for the broadcaster, which waits for the filler
    usleep(100_000)
    filler.core.lock.unlock()
    #expect(added.wait(timeout: .now() + 5) == .success, "SharedMiddlewares.add deadlocked")
    registration.value?.remove()
    _ = (filler, victim)
  }

  // MARK: What a freed store's core lets go of

  @Test("inv15: mutations that hold their store's actions are freed with the store, core included")
  func inv8_inv15_mutationsHoldingActionsLeak() {
    let (coreFreed, holderFreed) = storeHoldingItsActions(MutationsLeak.self) { holder in
      Store(state: CanaryState(), mutations: .init(holder), executor: .immediate)
    }
    #expect(coreFreed, "the core outlived its store")
    #expect(holderFreed, "the mutations' dependency outlived the store")
  }

  @Test("inv15: a custom executor whose context holds its store's actions is freed with the store, core included")
  func inv8_inv15_executorHoldingActionsLeak() {
    let (coreFreed, holderFreed) = storeHoldingItsActions(ExecutorLeak.self) { holder in
      Store(
        state: CanaryState(), mutations: .init(),
        executor: Executor { work in
          _ = holder
          work()
        })
    }
    #expect(coreFreed, "the core outlived its store")
    #expect(holderFreed, "the executor's captures outlived the store")
  }

  /// Makes a store whose parts (as `make` wires them) hold an object that holds the store's
  /// actions, dispatches once and lets the store go; returns whether its core and that object
  /// were freed.
  private func storeHoldingItsActions<Tag>(
    _: Tag.Type, _ make: (ActionsHolder<CanaryState<Tag>>) -> Store<CanaryState<Tag>>
  ) -> (coreFreed: Bool, holderFreed: Bool) {
    let flag = DeallocFlag()
    weak var core: StoreCore<CanaryState<Tag>>?
    do {
      let holder = ActionsHolder<CanaryState<Tag>>(flag)
      let store = make(holder)
      holder.actions = store.actions
      core = store.core
      store.actions.dispatch(action: 1)
    }
    // Polled: a shared middleware added by a test running meanwhile walks every core, and
    // holds each for a moment.
    return (waitUntil { core == nil }, flag.isFreed)
  }

  @Test("inv15: a middleware that holds its store's actions is freed with the store, core included")
  func controlMiddlewareHoldingActions() {
    final class M: Middleware, @unchecked Sendable {
      typealias State = CanaryState<MiddlewareNoLeak>
      nonisolated(unsafe) var actions: Actions<CanaryState<MiddlewareNoLeak>>?
      let flag: DeallocFlag
      init(_ flag: DeallocFlag) { self.flag = flag }
      deinit { flag.markFreed() }
    }
    let flag = DeallocFlag()
    weak var core: StoreCore<CanaryState<MiddlewareNoLeak>>?
    do {
      let m = M(flag)
      let store = Store(
        state: CanaryState<MiddlewareNoLeak>(), mutations: .init(), executor: .immediate,
        middlewares: [AnyMiddleware(m)])
      m.actions = store.actions
      core = store.core
      store.actions.dispatch(action: 1)
    }
    #expect(waitUntil { core == nil })  // polled, as in `storeHoldingItsActions`
    #expect(flag.isFreed)
  }
}

// MARK: ActionRecorder

final class PayloadAction: @unchecked Sendable {
  let onDeinit: @Sendable () -> Void
  init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
  deinit { onDeinit() }
}

final class PayloadState: State, @unchecked Sendable {
  typealias Action = PayloadAction
  typealias Mutations = PayloadMutations
}

struct PayloadMutations: Mutations {
  func commit(action: PayloadAction, state: PayloadState) {}
}

@Suite("ActionRecorder and user code")
struct RecorderLockTests {
  @Test("inv16: ActionRecorder.reset() lets the actions go outside its lock")
  func inv16_recorderResetReleasesUnderLock() {
    let recorder = ActionRecorder<PayloadState>()
    let store = Store(
      state: PayloadState(), mutations: .init(), executor: .immediate, middlewares: [AnyMiddleware(recorder)])
    store.actions.dispatch(action: PayloadAction { [weak recorder] in _ = recorder?.records.count })
    #expect(recorder.committed.count == 1)
    #expect(returnsInTime(seconds: 3) { recorder.reset() }, "the action's deinit ran under the recorder's lock")
  }
}

// MARK: Snapshots retired while a store registers

final class HookState<Tag>: State, @unchecked Sendable {
  typealias Action = Int
  typealias Mutations = HookMutations<Tag>
  nonisolated(unsafe) var hook: (@Sendable (Int) -> Void)?
  init(hook: (@Sendable (Int) -> Void)? = nil) { self.hook = hook }
}

struct HookMutations<Tag>: Mutations {
  let payload: (any AnyObject & Sendable)?
  init(_ payload: (any AnyObject & Sendable)? = nil) { self.payload = payload }
  func commit(action: Int, state: HookState<Tag>) { state.hook?(action) }
}

@Suite("Retired snapshots and user code", .serialized)
struct RetiredSnapshotTests {
  enum Retired {}

  @Test(
    "inv16: a snapshot retired with a freed store's last core, released as a store registers, frees it outside the process-wide lock"
  )
  func inv16_retiredBoxFreedUnderProcessWideLock() {
    typealias S = HookState<Retired>
    let registry = StoreRegistry<S>.shared.takeUnretainedValue()
    var hits = 0
    for _ in 0..<10 {
      let underLock = Recorder<Bool>()
      let entered = DispatchSemaphore(value: 0)
      let resume = DispatchSemaphore(value: 0)
      var victim: Store<S>? = Store(
        state: S(),
        mutations: .init(
          Canary {
            underLock.append(!processWideLockIsFree())
          }),
        executor: .immediate)
      let blocker = Store(
        state: S { action in
          if action == 1 {
            entered.signal()
            resume.wait()
          }
        }, mutations: .init(), executor: .immediate)
      // R1: a global dispatch that publishes box B1 {victim, blocker} and stays in its walk.
      let r1Done = DispatchSemaphore(value: 0)
      Thread {
        Store<S>.actions.dispatch(action: 1)
        r1Done.signal()
      }.start()
      entered.wait()
      victim = nil  // B1 is retired (a reader is in); B1 now holds the core's last reference
      Store<S>.actions.dispatch(action: 2)  // R2 publishes B2 {blocker} and leaves
      registry.lock.lock()  // stands for a moment of contention on the registry's lock
      let t3Done = DispatchSemaphore(value: 0)
      Thread {
        _ = Store(state: S(), mutations: .init(), executor: .immediate)  // Registries.register
        t3Done.signal()
      }.start()
      usleep(100_000)  // T3 waits for the registry lock, holding Registries.lock
      resume.signal()  // R1 ends its walk, counts out (readers 0), and waits to reclaim
      usleep(100_000)
      registry.lock.unlock()
      r1Done.wait()
      t3Done.wait()
      #expect(waitUntil { !underLock.values.isEmpty })
      let hit = underLock.values.first == true
      if hit { hits += 1 }
      _ = (blocker, victim)
    }
    #expect(hits == 0, "a core was freed under Registries.lock in \(hits) of 10 rounds")
  }
}

@Suite("Lanes under global dispatch, churn and shared middleware")
struct LaneChurnTests {
  enum Lane {}

  final class Watch: SharedMiddleware, @unchecked Sendable {
    func willCommit(action: any Sendable, state: any State) {}
  }

  @Test("inv14: lanes opening and closing while stores are freed under global dispatch: one answer per action")
  func laneStress() {
    let dispatched = Counter()
    let answered = Counter()
    let doubled = Counter()
    let stop = DeallocFlag()
    let live = Recorder<LogState<Lane>>()
    runOnThreads(4) { thread in
      switch thread {
      case 0:
        // Bounded: under the thread sanitizer, an unbounded loop here slows the store threads
        // (and every other test) far more than it adds.
        for i in 1...5_000 where !stop.isFreed {
          dispatched.increment()
          let once = OnceFlag()
          Store<LogState<Lane>>.actions.dispatch(action: i) { _ in
            if once.fire() { answered.increment() } else { doubled.increment() }
          }
          Store<LogState<Lane>>.actions.dispatch(action: i)
        }
      case 3:
        // A change of the shared list walks every live store of every type, under the
        // process-wide lock: a few, spaced, so that other tests creating stores get through.
        for _ in 0..<100 where !stop.isFreed {
          let registration = SharedMiddlewares.add(Watch())
          usleep(1_000)
          registration.remove()
          usleep(1_000)
        }
      default:
        for round in 0..<200 {
          let state = LogState<Lane>()
          live.append(state)
          var store: Store<LogState<Lane>>? = Store(state: state, mutations: .init(), executor: .immediate)
          let actions = store!.actions
          for a in 0..<5 {
            dispatched.increment()
            let once = OnceFlag()
            actions.dispatch(action: -a) { _ in
              if once.fire() { answered.increment() } else { doubled.increment() }
            }
          }
          if round % 2 == 0 {
            let box = Box<Store<LogState<Lane>>?>(store)
            store = nil
            DispatchQueue.global().async { box.value = nil }  // freed on another thread, maybe mid-commit
          } else {
            store = nil
          }
          _ = store
        }
        if thread == 1 { stop.markFreed() }
      }
    }
    #expect(waitUntil { answered.value == dispatched.value }, "\(dispatched.value - answered.value) never answered")
    #expect(doubled.value == 0)
    for state in live.values { #expect(state.overlapCount == 0) }
  }
}

final class OnceFlag: @unchecked Sendable {
  private let lock = NSLock()
  private var fired = false
  func fire() -> Bool {
    lock.withLock {
      defer { fired = true }
      return !fired
    }
  }
}

/// An object that holds a store's actions, and marks its flag when freed.
final class ActionsHolder<S: State>: @unchecked Sendable {
  // Set once, before the store it belongs to is used.
  nonisolated(unsafe) var actions: Actions<S>?
  let flag: DeallocFlag

  init(_ flag: DeallocFlag) {
    self.flag = flag
  }

  deinit { flag.markFreed() }
}
