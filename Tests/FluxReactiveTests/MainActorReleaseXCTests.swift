import Dispatch
import FluxReactive
import Foundation
import XCTest

@testable import FluxCore

/// Main-actor closures whose observations end on another thread while the real main thread
/// spins its run loop, as an XCTest test on Linux does: main-queue blocks run there, on the main
/// thread, as soon as they come.
final class MainActorReleaseXCTests: XCTestCase {
  func test_inv7_mainActorClosureCapturesFreedOnTheMainThreadWhileItsRunLoopSpins() throws {
    try XCTSkipUnless(MainQueue.shared.isOnMainQueue, "needs a test running on the main queue")
    for kind in MainActorClosureKind.allCases {
      for ending in OffMainEnding.allCases {
        let counts = endOffMain(kind, ending, rounds: 300)
        XCTAssertEqual(counts.freed, 300, "\(kind.rawValue), \(ending.rawValue): every capture is freed")
        XCTAssertEqual(
          counts.outside, 0,
          "\(kind.rawValue), \(ending.rawValue): \(counts.outside) of \(counts.freed) captures freed off the main thread"
        )
      }
    }
  }

  /// Starts `rounds` observations on the main thread, ends them on another thread, one at a
  /// time with a pause (so that the run loop waits for each), and spins the run loop meanwhile.
  private func endOffMain(_ kind: MainActorClosureKind, _ ending: OffMainEnding, rounds: Int)
    -> DomainDetector.Counts
  {
    let detector = DomainDetector.mainActor()
    let target = MainActor.assumeIsolated { ReleaseTarget() }
    var kept: [Sink<Int>] = []
    let ends = MainActor.assumeIsolated {
      (0..<rounds).map { _ in
        MainActorReleaseTests.start(kind, ending, probe: DomainProbe(detector), target: target, keeping: &kept)
      }
    }
    let finished = LockedValue(false)
    let ender = Thread {
      for handoff in ends {
        guard let end = handoff.take() else { continue }
        end.end()
        usleep(50)  // the run loop waits for work when the next observation ends
      }
      finished.withLock { $0 = true }
    }
    ender.start()
    let deadline = Date() + 60
    while (!finished.current || detector.current.freed < rounds) && Date() < deadline {
      RunLoop.current.run(until: Date() + 0.001)
    }
    withExtendedLifetime((target, kept)) {}
    return detector.current
  }
}
