import Dispatch
import Foundation
import XCTest

@testable import FluxCore

/// `.mainThread` work that spins a nested run loop. XCTest on Linux runs a synchronous test on
/// the main thread, where main-queue blocks run while a run loop spins, so these are XCTest cases.
final class MainQueueRunLoopTests: XCTestCase {
  func test_inv13_nestedRunLoopRunsNoMainThreadWorkInsideRunningWork() throws {
    try XCTSkipUnless(MainQueue.shared.isOnMainQueue, "needs a test running on the main queue")
    let log = Log()
    Executor.mainThread.execute {  // inline: nothing waits
      log.append("W begins")
      Executor.mainThread.execute { log.append("F") }  // submitted from inside W: follows it
      let submitted = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        Executor.mainThread.execute { log.append("X") }  // from elsewhere: schedules a block
        submitted.signal()
      }
      submitted.wait()
      RunLoop.current.run(until: Date() + 0.2)  // a modal loop, say: runs X's block in here
      log.append("W ends")
    }
    spinMainRunLoop(until: { log.values.count == 4 })  // X's block may not have run inside W
    XCTAssertEqual(log.values, ["W begins", "W ends", "F", "X"])
  }

  func test_inv13_workLeftByANestedBlockRunsBeforeLaterWork() throws {
    try XCTSkipUnless(MainQueue.shared.isOnMainQueue, "needs a test running on the main queue")
    let log = Log()
    Executor.mainThread.execute {
      let submitted = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        Executor.mainThread.execute { log.append("X1") }
        Executor.mainThread.execute { log.append("X2") }
        submitted.signal()
      }
      submitted.wait()
      RunLoop.current.run(until: Date() + 0.2)  // both blocks run in here and leave their work
      log.append("W ends")
    }
    spinMainRunLoop(until: { log.values.count == 3 })  // their blocks may not have run inside W
    XCTAssertEqual(log.values, ["W ends", "X1", "X2"])
    Executor.mainThread.execute { log.append("later") }  // nothing waits: inline
    XCTAssertEqual(log.values, ["W ends", "X1", "X2", "later"])
  }
}

/// Runs the main run loop until `condition` holds, for at most 10 seconds.
private func spinMainRunLoop(until condition: () -> Bool) {
  let deadline = Date() + 10
  while !condition() && Date() < deadline { RunLoop.current.run(until: Date() + 0.01) }
}

/// Strings appended from any thread.
private final class Log: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var items: [String] = []

  func append(_ item: String) { lock.withLock { items.append(item) } }

  var values: [String] { lock.withLock { items } }
}
