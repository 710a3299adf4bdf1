import FluxCore
import FluxReactive
import FluxTesting
import Foundation

/// A counter for the test kit's tests: Codable, Equatable actions and a snapshot.
final class CounterState: State, Snapshotting, CustomStringConvertible {
  typealias Action = CounterAction
  typealias Mutations = CounterMutations

  fileprivate let count = Variable(0)

  var snapshot: Int { count.value }

  static func restore(_ snapshot: Int) -> CounterAction { .set(snapshot) }

  var description: String { "CounterState(count: \(count.value))" }
}

enum CounterAction: Codable, Equatable, Sendable {
  case add(Int)
  case set(Int)
  case reset
}

struct CounterMutations: Mutations {
  func commit(action: CounterAction, state: CounterState) {
    switch action {
    case .add(let amount): state.count.modify { $0 += amount }
    case .set(let value): state.count.value = value
    case .reset: state.count.value = 0
    }
  }
}

extension Computed where State == CounterState {
  var count: Constant<Int> { state.count.constant }
}

/// Cancels every negative `add`.
struct NoNegativeAmounts: Middleware {
  func intercept(action: CounterAction, state: CounterState, proceed: Proceed) {
    if case .add(let amount) = action, amount < 0 { proceed.cancel() } else { proceed() }
  }
}

/// Lets every action go on a little later, from a global queue.
struct LaterOnAnotherThread: Middleware {
  func intercept(action: CounterAction, state: CounterState, proceed: Proceed) {
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { proceed() }
  }
}

/// After each `reset`, dispatches `add(10)` to the store it is told of.
final class RefillAfterReset: Middleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var target: Actions<CounterState>?

  func serve(_ actions: Actions<CounterState>) {
    lock.withLock { target = actions }
  }

  func didCommit(action: CounterAction, state: CounterState) {
    guard action == .reset else { return }
    lock.withLock { target }?.dispatch(action: .add(10))
  }
}

/// Lines written to an action log, kept in memory.
final class Lines: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var lines: [String] = []

  var output: ActionLogOutput {
    ActionLogOutput { line in self.lock.withLock { self.lines.append(line) } }
  }

  var all: [String] { lock.withLock { lines } }

  var text: String { all.joined() }
}

extension Lines {
  /// Waits until `count` lines are there (a log's queue may still be writing); whether they are.
  func waitForCount(_ count: Int, seconds: Double = 10) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while all.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    return all.count >= count
  }
}

/// Takes 2 ms in `didCommit`, after signalling `committed`: the drain holds the store's state
/// a moment after each commit.
struct SlowDidCommit: Middleware {
  let committed = DispatchSemaphore(value: 0)

  func didCommit(action: CounterAction, state: CounterState) {
    committed.signal()
    Thread.sleep(forTimeInterval: 0.002)
  }
}
