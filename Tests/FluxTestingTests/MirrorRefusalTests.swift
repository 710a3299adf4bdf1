import FluxCore
import FluxTesting
import Foundation
import Testing

/// A line whose state was written through `Mirror` (`"stateMirror"`) is there to be looked at:
/// whatever reads states back refuses it, and says why.
@Suite("Mirror snapshots are read-only")
struct MirrorRefusalTests {
  /// A committed line of "counter" with a Mirror snapshot, as `snapshots: .mirror` writes it
  /// with the fields of `.swift`.
  static let line =
    #"{"action":{"add":{"_0":2}},"durationNanoseconds":1500,"outcome":"committed","sequence":1,"#
    + #""stateForm":"mirror","stateMirror":{"fields":{"count":{"fields":{"value":2},"id":2,"kind":"class","#
    + #""type":"Variable<Int>"}},"id":1,"kind":"class","type":"CounterState"},"#
    + #""stateType":"FluxTestingTests.CounterState","store":"counter","swift":".add(2)","#
    + #""time":"2026-11-27T16:00:00.000Z"}"# + "\n"

  @Test("reading the state of a line with a Mirror snapshot throws and says it is one, rather than finding no state")
  func stateOfAMirrorLineThrows() throws {
    let entry = try #require(try Recording(jsonLines: Self.line).entries.first)
    #expect(!entry.hasState)
    let error = #expect(throws: RecordingError.self) { try entry.state(as: Int.self) }
    #expect(
      error?.description
        == "line 1: the state is a Mirror snapshot (\"stateMirror\", of `snapshots: .mirror`), written to be looked at:"
        + " it is not read back as a Int, nor set back into a store; log the store with `snapshots: .snapshot`"
        + " (a Snapshotting state) or `.encoding` for states that can be")
  }

  @Test("time travel through a log of Mirror snapshots is refused, naming the line and why")
  func timeTravelRefusesMirrorSnapshots() throws {
    let error = #expect(throws: RecordingError.self) {
      try TimeTravel(Recording(jsonLines: Self.line), label: "counter", from: CounterState())
    }
    #expect(error?.line == 1)
    #expect(error?.description.contains("the state is a Mirror snapshot") == true)
  }

  @Test("a session test of a store logged with Mirror snapshots names the snapshot as the problem")
  func sessionTestNamesMirrorSnapshots() throws {
    let error = #expect(throws: SessionTestError.self) {
      try SessionTest(Recording(jsonLines: Self.line), source: "session.jsonl")
    }
    let problems = error?.problems.map(\.message) ?? []
    #expect(
      problems.contains {
        $0.hasPrefix("its state is a Mirror snapshot (`snapshots: .mirror`), which a test cannot compare or take")
      })
  }
}
