import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("ActionLog: the queue at its edges")
struct ActionLogQueueEdgeTests {
  @Test("a log let go on the queue of another log still waits for its lines before it goes")
  func logLetGoOnAnotherLogsQueueWaits() {
    for _ in 0..<3 {
      let slowLines = Lines()
      let held = Held<ActionLog>()
      do {
        let slow = ActionLog(
          output: ActionLogOutput { line in
            Thread.sleep(forTimeInterval: 0.001)
            slowLines.output.write(line)
          })
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [slow.middleware(label: "slow")])
        for amount in 1...30 { store.actions.dispatch(action: .add(amount)) }
        held.put(slow)
      }
      // The other log's output lets go of the last reference to the slow log: its deinit runs on
      // the other log's queue.
      let other = ActionLog(output: ActionLogOutput { _ in held.take() })
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [other.middleware(label: "other")])
      store.actions.dispatch(action: .add(1))
      other.flush()
      #expect(held.isEmpty)
      #expect(slowLines.all.count == 30, "the slow log went before its lines were written")
      _ = slowLines.waitForCount(30)
    }
  }
}

/// One value, that one thread puts and another takes (and lets go of, outside the lock).
final class Held<Value: AnyObject>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var value: Value?

  func put(_ value: Value) { lock.withLock { self.value = value } }

  func take() {
    let taken = lock.withLock {
      defer { value = nil }
      return value
    }
    withExtendedLifetime(taken) {}
  }

  var isEmpty: Bool { lock.withLock { value == nil } }
}
