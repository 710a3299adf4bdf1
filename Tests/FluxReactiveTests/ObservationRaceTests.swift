import Dispatch
import Foundation
import Observation
import Testing

@testable import FluxReactive

/// A set that races a tracker which has read the value but is not installed yet (Observation
/// installs it when `withObservationTracking`'s closure returns) loses no later update: a set
/// made after the install always reaches the tracker.
@Suite("Observation racing sets")
struct ObservationRaceTests {
  @Test("a set between a tracker's read and its install does not hide the next set from it")
  func setBetweenReadAndInstallKeepsTheNextSetHeard() {
    for change in Change.allCases {
      for _ in 0..<200 {
        let variable = Variable(0)
        let fired = Counter()
        let read = DispatchSemaphore(value: 0)
        let setDuringApply = DispatchSemaphore(value: 0)
        let installed = DispatchSemaphore(value: 0)
        let tracker = Thread {
          withObservationTracking(
            {
              _ = variable.value
              read.signal()
              setDuringApply.wait()  // a set ran after the read, before the install
            },
            onChange: { fired.increment() })
          installed.signal()
        }
        tracker.start()
        read.wait()
        change.apply(to: variable)
        setDuringApply.signal()
        installed.wait()
        change.apply(to: variable)  // after the install: heard
        #expect(fired.value == 1, "\(change): the tracker missed a set made after it was installed")
      }
    }
  }

  @Test("trackers on several threads, installed while others set, all hear a set made after them")
  func trackersRacingSettersAllHearALaterSet() {
    let variable = Variable(0)
    let text = Variable("")
    let trackings = Recorder<Counter>()  // each tracking's onChange calls, one counter per tracking
    let stop = LockedValue(false)
    runOnThreads(6) { thread in
      if thread < 2 {
        var round = 0
        while !stop.current {
          round &+= 1
          Change.allCases[round % Change.allCases.count].apply(to: variable)
          text.value += "."
        }
      } else {
        for _ in 0..<300 {
          let fired = Counter()
          withObservationTracking({ _ = (variable.value, text.value) }, onChange: { fired.increment() })
          trackings.append(fired)
        }
        if trackings.values.count == 4 * 300 { stop.withLock { $0 = true } }
      }
    }
    #expect(trackings.values.count == 1_200)
    variable.value += 1  // after every install: each tracker not yet fired hears this one
    // Observation may call one tracking's onChange twice when two of its values change at once
    // on two threads; what must not happen is a tracking that never hears of a change.
    let deaf = trackings.values.filter { $0.value == 0 }.count
    #expect(deaf == 0, "\(deaf) trackings installed before the last set never heard of it")
  }
}

/// The ways to change a variable.
private enum Change: CaseIterable, CustomStringConvertible {
  case set, inPlace, modify

  func apply(to variable: Variable<Int>) {
    switch self {
    case .set: variable.value = variable.value &+ 1
    case .inPlace: variable.value += 1
    case .modify: variable.modify { $0 += 1 }
    }
  }

  var description: String {
    switch self {
    case .set: return "value = value + 1"
    case .inPlace: return "value += 1"
    case .modify: return "modify"
    }
  }
}
