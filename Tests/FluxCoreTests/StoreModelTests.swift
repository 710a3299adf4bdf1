import Dispatch
import Foundation
import Testing

@testable import FluxCore

// Random programs of dispatch, hold, decide later (from another thread), drop a Proceed, add
// and remove shared middleware, and free the store, run on a real store and on a sequential
// model of rules 14 and 15. A failure prints the seed; FLUX_STORE_SEED=<seed> runs that one.

@Suite("Model: stores and middleware against a sequential model")
struct StoreModelTests {
  enum Immediate {}
  enum Queue {}
  enum Lane {}

  private static let programCount = 150
  private static let stepCount = 40

  private static var seeds: [UInt64] {
    if let text = ProcessInfo.processInfo.environment["FLUX_STORE_SEED"], let seed = UInt64(text) { return [seed] }
    return (0..<UInt64(programCount)).map { 0x5702_E000 + $0 }
  }

  /// What the program's middleware does with an action.
  enum Policy: CaseIterable {
    case proceed, cancel, hold, drop
  }

  enum Step: CustomStringConvertible {
    case dispatch(Policy)
    /// Decides the held action at this index of the held list, on another thread or not.
    case decide(Int, goesOn: Bool, elsewhere: Bool)
    /// Releases the held action's only Proceed without deciding.
    case release(Int)
    case toggleShared
    case freeStore

    var description: String {
      switch self {
      case .dispatch(let policy): "dispatch(\(policy))"
      case .decide(let index, let goesOn, let elsewhere): "decide(\(index), \(goesOn), elsewhere: \(elsewhere))"
      case .release(let index): "release(\(index))"
      case .toggleShared: "toggleShared"
      case .freeStore: "freeStore"
      }
    }
  }

  static func program(seed: UInt64) -> [Step] {
    var random = SplitMix64(seed: seed)
    return (0..<stepCount).map { _ in
      switch Int.random(in: 0..<20, using: &random) {
      case 0..<9: .dispatch(Policy.allCases.randomElement(using: &random)!)
      case 9..<13:
        .decide(
          Int.random(in: 0..<4, using: &random), goesOn: random.chance(2, in: 3), elsewhere: random.chance(1, in: 2))
      case 13..<15: .release(Int.random(in: 0..<4, using: &random))
      case 15..<19: .toggleShared
      default: random.chance(1, in: 3) ? .freeStore : .toggleShared
      }
    }
  }

  /// How an action ended, as the model says.
  enum End: Equatable {
    case committed, cancelled, dropped
  }

  /// The contract, run sequentially.
  struct Model {
    /// Whether the program's middleware is shared (and `toggleShared` adds and removes it)
    /// rather than the store's own.
    var gateIsShared = false
    var isLive = true
    var isSharedOn = false
    var held: [Int] = []
    var commits: [Int] = []
    var ends: [Int: End] = [:]
    var sawShared: Set<Int> = []
    var intercepted: Set<Int> = []

    mutating func run(_ step: Step, action: Int) {
      switch step {
      case .dispatch(let policy):
        guard isLive else {
          ends[action] = .dropped
          return
        }
        if gateIsShared && !isSharedOn {
          end(action, .committed)  // nothing intercepts: the store commits at once
          return
        }
        intercepted.insert(action)
        if isSharedOn { sawShared.insert(action) }
        switch policy {
        case .proceed: end(action, .committed)
        case .cancel, .drop: end(action, .cancelled)
        case .hold: held.append(action)
        }
      case .decide(let index, let goesOn, _):
        guard index < held.count else { return }
        let action = held.remove(at: index)
        if isLive { end(action, goesOn ? .committed : .cancelled) }
      case .release(let index):
        guard index < held.count else { return }
        let action = held.remove(at: index)
        if isLive { end(action, .cancelled) }
      case .toggleShared:
        isSharedOn.toggle()
      case .freeStore:
        guard isLive else { return }
        isLive = false
        for action in held { ends[action] = .dropped }
      }
    }

    mutating func end(_ action: Int, _ end: End) {
      ends[action] = end
      if end == .committed { commits.append(action) }
    }
  }

  /// The program's middleware: does with each action what the program says.
  final class Gate<Tag>: Middleware, @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var policies: [Int: Policy] = [:]
    // Guarded by `lock`.
    private var kept: [Int: Proceed] = [:]
    let intercepted = Recorder<Int>()
    let cancelled = Recorder<Int>()

    func expect(_ action: Int, _ policy: Policy) { lock.withLock { policies[action] = policy } }

    func take(_ action: Int) -> Proceed? { lock.withLock { kept.removeValue(forKey: action) } }

    func intercept(action: Int, state: LogState<Tag>, proceed: Proceed) {
      let policy = lock.withLock { policies[action] }
      if policy == .hold { lock.withLock { kept[action] = proceed } }
      intercepted.append(action)  // after keeping: the program waits for this
      switch policy {
      case .proceed: proceed()
      case .cancel: proceed.cancel()
      case .hold, .drop, nil: break
      }
    }

    func didCancel(action: Int, state: LogState<Tag>) { cancelled.append(action) }
  }

  /// The program's middleware as shared middleware: applies the gate to `LogState<Tag>` only.
  final class SharedGate<Tag>: SharedMiddleware, @unchecked Sendable {
    let gate: Gate<Tag>

    init(_ gate: Gate<Tag>) {
      self.gate = gate
    }

    func intercept(action: any Sendable, state: any State, proceed: Proceed) {
      guard let state = state as? LogState<Tag>, let action = action as? Int else { return proceed() }
      gate.intercept(action: action, state: state, proceed: proceed)
    }

    func didCancel(action: any Sendable, state: any State) {
      guard let state = state as? LogState<Tag>, let action = action as? Int else { return }
      gate.didCancel(action: action, state: state)
    }
  }

  /// Runs the program of `seed`. With `gateIsShared`, the gate is shared middleware that
  /// `toggleShared` adds and removes, so that the store, on `.immediate`, dispatches through its
  /// fast lane whenever the gate is off, held actions and all.
  static func run<Tag>(_: Tag.Type, seed: UInt64, executor: Executor, gateIsShared: Bool = false) {
    let steps = program(seed: seed)
    let state = LogState<Tag>()
    let gate = Gate<Tag>()
    let shared: SharedMiddleware = gateIsShared ? SharedGate(gate) : SharedHolder<Tag>()
    let recorder = shared as? SharedHolder<Tag>
    var registration = gateIsShared ? SharedMiddlewares.add(shared) : nil
    var store: Store<LogState<Tag>>? = Store(
      state: state, mutations: .init(), executor: executor, middlewares: gateIsShared ? [] : [AnyMiddleware(gate)])
    let actions = store!.actions
    let answers = Recorder<(Int, Bool)>()
    var model = Model(gateIsShared: gateIsShared, isSharedOn: gateIsShared)
    var heldActions: [Int] = []  // the real program's held list, as the model keeps it
    for (action, step) in steps.enumerated() {
      switch step {
      case .dispatch(let policy):
        gate.expect(action, policy)
        actions.dispatch(action: action) { answers.append((action, $0)) }
        let intercepted = !gateIsShared || registration != nil
        // Late decisions stay in the program.
        if policy == .hold && store != nil && intercepted { heldActions.append(action) }
      case .decide(let index, let goesOn, let elsewhere):
        guard index < heldActions.count else { break }
        let proceed = gate.take(heldActions.remove(at: index))!
        let decide: @Sendable () -> Void = { goesOn ? proceed() : proceed.cancel() }
        if elsewhere { runOnThreads(1) { _ in decide() } } else { decide() }
      case .release(let index):
        guard index < heldActions.count else { break }
        _ = gate.take(heldActions.remove(at: index))
      case .toggleShared:
        if let current = registration {
          current.remove()
          registration = nil
        } else {
          registration = SharedMiddlewares.add(shared)
        }
      case .freeStore:
        store = nil
      }
      model.run(step, action: action)
      // Wait for every action the model has ended, so the next step finds the store idle.
      let ended = model.ends.count
      let intercepted = model.intercepted.count
      guard waitUntil({ answers.values.count == ended && gate.intercepted.values.count == intercepted }) else {
        Issue.record("seed \(seed): \(answers.values.count) answers, expected \(ended) after step \(action) \(step)")
        registration?.remove()
        return
      }
    }
    registration?.remove()
    let context = "seed \(seed): \(steps)"
    let answerIDs = answers.values.map(\.0)
    #expect(Set(answerIDs).count == answerIDs.count, "an action ended twice; \(context)")
    for (action, committed) in answers.values {
      #expect(committed == (model.ends[action] == .committed), "action \(action) answered \(committed); \(context)")
    }
    #expect(state.committed.values == model.commits, "\(context)")
    let cancelled = Set(model.ends.filter { $0.value == .cancelled }.keys)
    #expect(Set(gate.cancelled.values) == cancelled, "\(context)")
    #expect(gate.intercepted.values.count == model.intercepted.count, "an interceptor ran twice; \(context)")
    if let recorder { #expect(Set(recorder.intercepted.values) == model.sawShared, "\(context)") }
    withExtendedLifetime(store) {}
  }

  @Test("inv14, inv15: random programs on .immediate end every action once, as the model says")
  func inv14_inv15_immediate() {
    for seed in Self.seeds { Self.run(Immediate.self, seed: seed, executor: .immediate) }
  }

  @Test("inv14, inv15: random programs on .immediate, with the gate shared and toggled, as the model says")
  func inv14_inv15_lane() {
    for seed in Self.seeds { Self.run(Lane.self, seed: seed, executor: .immediate, gateIsShared: true) }
  }

  @Test("inv14, inv15: random programs on .queue end every action once, as the model says")
  func inv14_inv15_queue() {
    for seed in Self.seeds { Self.run(Queue.self, seed: seed, executor: .queue(DispatchQueue(label: "model"))) }
  }
}
