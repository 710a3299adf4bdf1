import Dispatch
import Foundation
import Testing

@testable import FluxCore

/// Stores created and freed while actions are dispatched to them, with middleware deciding late
/// from other threads and shared middleware coming and going. CI runs this suite under the
/// address sanitizer with leak detection, and under the thread sanitizer.
@Suite("Churn: stores, middleware and decisions under load")
struct ChurnTests {
  enum Churn {}

  /// Counts the live instances of what holds one: each middleware holds one.
  final class LiveToken: Sendable {
    let live: Counter

    init(_ live: Counter) {
      self.live = live
      live.increment()
    }

    deinit { live.decrement() }
  }

  /// Proceeds at once, later from a worker thread, cancels, or drops the Proceed, by action.
  struct LateDecider: Middleware {
    let token: LiveToken

    func intercept(action: Int, state: LogState<Churn>, proceed: Proceed) {
      switch action % 5 {
      case 0: proceed()
      case 1: DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(200)) { proceed() }
      case 2: DispatchQueue.global().async { proceed.cancel() }
      case 3: break  // dropped: cancelled
      default: DispatchQueue.global().async { proceed() }
      }
    }
  }

  @Test("inv14, inv15, inv16: churn ends every action once and frees every store, core and middleware")
  func inv15_churnLeavesNothingBehind() {
    let rounds = 2_000
    let liveMiddleware = Counter()
    let liveStates = Counter()
    let dispatched = Counter()
    let answered = Counter()
    let stop = DeallocFlag()
    runOnThreads(3) { thread in
      if thread == 2 {
        // Shared middleware comes and goes meanwhile.
        while !stop.isFreed {
          let registration = SharedMiddlewares.add(SharedHolder<Churn>())
          usleep(50)
          registration.remove()
        }
        return
      }
      for round in 0..<rounds {
        let state = LogState<Churn>()
        state.hook = { [token = LiveToken(liveStates)] _ in _ = token }
        var store: Store<LogState<Churn>>? = Store(
          state: state, mutations: .init(), executor: round % 2 == 0 ? .immediate : .queue(.global()),
          middlewares: [AnyMiddleware(LateDecider(token: LiveToken(liveMiddleware)))])
        let actions = store!.actions
        for action in 0..<10 {
          dispatched.increment()
          actions.dispatch(action: action) { _ in answered.increment() }
        }
        if round % 3 == 0 {
          dispatched.increment()
          Store<LogState<Churn>>.actions.dispatch(action: round) { _ in answered.increment() }
        } else if round % 3 == 1 {
          // The lock-free walk, over stores that the other thread makes and frees meanwhile.
          Store<LogState<Churn>>.actions.dispatch(action: round)
        }
        if round % 4 == 0 { usleep(100) }
        store = nil
        if thread == 0 && round == rounds - 1 { stop.markFreed() }
      }
    }
    #expect(
      waitUntil { answered.value == dispatched.value }, "\(dispatched.value - answered.value) waiters never learned")
    #expect(waitUntil { liveMiddleware.value == 0 }, "\(liveMiddleware.value) middleware outlived their stores")
    #expect(waitUntil { liveStates.value == 0 }, "\(liveStates.value) states outlived their stores")
  }
}
