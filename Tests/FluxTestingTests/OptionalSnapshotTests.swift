import FluxCore
import FluxTesting
import Foundation
import Testing

/// A line without `state` has no state; `"state":null` is a snapshot that is `nil`.
@Suite("Optional snapshots")
struct OptionalSnapshotTests {
  @Test("a nil snapshot of an optional type is written `\"state\":null`, reads back as .some(nil), and time travels")
  func nilSnapshotOfAnOptionalTypeReadsBack() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<MaybeState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [log.middleware(label: "maybe", snapshots: .snapshot)])
    for value in [nil, 3, nil] as [Int?] { store.actions.dispatch(action: .set(value)) }
    log.flush()
    #expect(lines.all.map { $0.contains(#""state":null"#) } == [true, false, true])
    let recording = try Recording(jsonLines: lines.text)
    #expect(recording.entries.map(\.hasState) == [true, true, true])
    let states = try recording.entries.map { try $0.state(as: Int?.self) }
    #expect(states == [.some(nil), .some(3), .some(nil)])
    let travel = try TimeTravel(recording, label: "maybe", from: MaybeState(value: 8))
    #expect(travel.snapshots == [8, nil, 3, nil])
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("a line without `state` reads as no state for an optional type too, as logs always did")
  func lineWithoutStateIsNoStateForAnOptionalType() throws {
    let text =
      #"{"action":{"set":{"_0":null}},"outcome":"committed","store":"maybe","time":"2026-11-23T03:07:49.123Z"}"#
    let entry = try #require(try Recording(jsonLines: text).entries.first)
    #expect(!entry.hasState)
    #expect(try entry.state(as: Int?.self) == nil)
    let error = #expect(throws: RecordingError.self) {
      try TimeTravel(Recording(jsonLines: text), label: "maybe", from: MaybeState())
    }
    #expect(
      error?.description == "line 1: the line has no \"state\": the log was not written with snapshots of \"maybe\"")
  }

  @Test("`\"state\":null` read as a type that is not optional is a type error, not a line without state")
  func nullStateOfATypeThatIsNotOptionalIsATypeError() throws {
    let text =
      #"{"action":{"set":{"_0":1}},"outcome":"committed","state":null,"store":"counter","time":"2026-11-23T03:07:49.123Z"}"#
    let recording = try Recording(jsonLines: text)
    let entry = try #require(recording.entries.first)
    #expect(entry.hasState)
    let read = #expect(throws: RecordingError.self) { try entry.state(as: Int.self) }
    #expect(read?.description == #"line 1: the state is not a Int ("state" is null)"#)
    let travel = #expect(throws: RecordingError.self) {
      try TimeTravel(recording, label: "counter", from: CounterState())
    }
    #expect(travel?.description == #"line 1: the state is not a Int ("state" is null)"#)
  }
}

/// A state whose snapshot is optional.
final class MaybeState: State, Snapshotting, @unchecked Sendable {
  typealias Action = MaybeAction
  typealias Mutations = MaybeMutations

  private let lock = NSLock()
  // Guarded by `lock`.
  private var value: Int?

  init(value: Int? = nil) {
    self.value = value
  }

  var snapshot: Int? { lock.withLock { value } }

  static func restore(_ snapshot: Int?) -> MaybeAction { .set(snapshot) }

  func set(_ newValue: Int?) {
    lock.withLock { value = newValue }
  }
}

enum MaybeAction: Codable, Equatable, Sendable {
  case set(Int?)
}

struct MaybeMutations: Mutations {
  func commit(action: MaybeAction, state: MaybeState) {
    switch action {
    case .set(let value): state.set(value)
    }
  }
}
