import Dispatch
import Foundation

@testable import FluxCore

// The stores of `StoreChaosTests`: their actions, state, mutations and middleware, which check
// the store rules as they run.

/// What the middleware does with a chaos action.
enum ChaosMode: CaseIterable {
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
enum ChaosEcho {
  case none, sameStore, everyStore
}

struct ChaosAction: Sendable {
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
final class ChaosState: State, @unchecked Sendable {
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

struct ChaosMutations: Mutations {
  let token: ChaosToken

  func commit(action: ChaosAction, state: ChaosState) {
    state.enter("commit", action)
    state.beginCommit(action)
    state.chaos.stats.count(action.stream < 0 ? "commitUnordered" : action.isOrdered ? "commitOrdered" : "commitOther")
    if action.id % 13 == 0 { chaosSpin(microseconds: 20) }
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
struct ChaosMiddleware: Middleware {
  let token: ChaosToken
  let chaos: Chaos
  /// The first middleware of its store records the hooks; every one of them sees each.
  let isFirst: Bool
  /// The store's actions, for dispatching from a hook.
  let reach: ChaosReach

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
      if action.id % 2 == 0 { chaosSpin(microseconds: 30) }
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
struct ChaosHolder: SharedMiddleware {
  let token: ChaosToken
  let chaos: Chaos
  let log: ChaosHolderLog

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
final class ChaosHolderLog: @unchecked Sendable {
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
struct ChaosWatcher: SharedMiddleware {
  let token: ChaosToken

  func didCommit(action: any Sendable, state: any State) {
    _ = token
  }
}
