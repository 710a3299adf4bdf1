import Dispatch
import FluxCore
import Foundation
import Testing

/// Many `dispatchAndWait` calls at once, decided in every way a middleware can, while the store
/// goes: each call returns once, with its action's outcome.
@Suite("Awaiting dispatches that race")
struct DispatchAndWaitRaceTests {
  enum Decided {}

  /// Decides by the action's remainder mod 5: proceeds or cancels at once, proceeds or cancels
  /// later on a worker thread, or lets its `Proceed` go undecided on a worker thread.
  private struct Decider: Middleware {
    func intercept(action: Int, state: LogState<Decided>, proceed: Proceed) {
      switch action % 5 {
      case 0: proceed()
      case 1: proceed.cancel()
      case 2: DispatchQueue.global().async { proceed() }
      case 3: DispatchQueue.global().async { proceed.cancel() }
      default: DispatchQueue.global().async { withExtendedLifetime(proceed) {} }
      }
    }
  }

  /// The store under test, freed on whichever thread takes it.
  private final class StoreSlot: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var store: Store<LogState<Decided>>?

    init(_ store: Store<LogState<Decided>>) {
      self.store = store
    }

    func free() {
      let store = lock.withLock { self.store.take() }
      withExtendedLifetime(store) {}  // freed here, after the lock
    }
  }

  @Test(
    "inv14, inv15: every dispatchAndWait returns its action's outcome, whoever decides and whenever the store goes",
    arguments: ["immediate", "concurrent queue", "serial queue"])
  func inv14_inv15_everyWaiterReturns(executorName: String) async {
    for round in 0..<100 {
      let executor: Executor =
        switch executorName {
        case "immediate": .immediate
        case "concurrent queue": .queue(.global())
        default: .queue(DispatchQueue(label: "DispatchAndWaitRaceTests"))
        }
      let store = Store(
        state: LogState<Decided>(), mutations: .init(), executor: executor, middlewares: [AnyMiddleware(Decider())])
      let actions = store.actions
      let slot = StoreSlot(store)
      _ = consume store
      // Every other round keeps the store, so the outcomes can be checked.
      let freeAfter = round % 2 == 0 ? nil : round % 30
      let outcomes = Recorder<(action: Int, committed: Bool)>()
      let ended = Counter()
      Task {
        await withTaskGroup(of: Void.self) { group in
          for action in 0..<30 {
            group.addTask { outcomes.append((action, await actions.dispatchAndWait(action: action))) }
            if action == freeAfter { group.addTask { slot.free() } }
          }
        }
        ended.increment()
      }
      let returned = await eventually { ended.value == 1 }
      #expect(returned, "\(30 - outcomes.values.count) waiters never returned (round \(round))")
      guard returned else { return }
      #expect(outcomes.values.count == 30)
      if freeAfter == nil {
        for (action, committed) in outcomes.values {
          #expect(committed == [0, 2].contains(action % 5), "action \(action) (round \(round))")
        }
      }
      slot.free()
    }
  }
}
