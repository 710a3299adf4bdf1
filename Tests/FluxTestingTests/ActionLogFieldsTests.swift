import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("ActionLog fields for a viewer")
struct ActionLogFieldsTests {
  /// The keys of each line, as written.
  static func keys(_ lines: [String]) throws -> [Set<String>] {
    try lines.map { line in
      let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      return Set(object.keys)
    }
  }

  @Test("a log made with no options writes exactly the fields it always wrote, and no state")
  func noOptionsNoNewFields() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeAmounts()), log.middleware(label: "counter")])
    store.actions.dispatch(action: .add(2))
    store.actions.dispatch(action: .add(-1))
    store.actions.dispatch(action: .add(1))
    log.flush()  // the log's queue writes the lines
    #expect(
      try Self.keys(lines.all) == [
        ["action", "durationNanoseconds", "outcome", "store", "time"], ["action", "outcome", "store", "time"],
        ["action", "durationNanoseconds", "outcome", "store", "time"],
      ])
    let recording = try Recording(jsonLines: lines.text)
    #expect(recording.entries.allSatisfy { $0.sequence == nil && $0.holds.isEmpty && !$0.hasState })
    #expect(recording.entries.allSatisfy { $0.cancelledBy == nil && $0.dispatch == nil })
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("snapshots off: every field but the state, and no `state` key on any line")
  func snapshotsOffWritesNoState() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "counter")])
    for amount in 1...3 { store.actions.dispatch(action: .add(amount)) }
    log.flush()  // the log's queue writes the lines
    #expect(try Self.keys(lines.all).allSatisfy { !$0.contains("state") && $0.contains("sequence") })
    #expect(try Recording(jsonLines: lines.text).entries.allSatisfy { !$0.hasState })
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("`sequence` counts the lines from 1 and reads back")
  func sequenceWrittenAndRead() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .sequence)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeAmounts()), log.middleware(label: "counter")])
    for amount in [1, -2, 3] { store.actions.dispatch(action: .add(amount)) }
    log.flush()  // the log's queue writes the lines
    #expect(lines.all.allSatisfy { $0.contains(#""sequence":"#) })
    #expect(try Recording(jsonLines: lines.text).entries.map(\.sequence) == [1, 2, 3])
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("`state` holds the snapshot after each commit, not on cancelled lines, and reads back")
  func stateWrittenAndRead() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeAmounts()), log.middleware(label: "counter", snapshots: .snapshot)])
    for amount in [2, -1, 5] { store.actions.dispatch(action: .add(amount)) }
    log.flush()  // the log's queue writes the lines
    #expect(try Self.keys(lines.all).map { $0.contains("state") } == [true, false, true])
    let recording = try Recording(jsonLines: lines.text)
    #expect(recording.entries.map(\.hasState) == [true, false, true])
    #expect(try recording.entries.map { try $0.state(as: Int.self) } == [2, nil, 7])
    #expect(throws: RecordingError.self) { try recording.entries[0].state(as: String.self) }
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("`state` through a snapshot function of the user's")
  func stateThroughAFunction() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [
        log.middleware(label: "counter", snapshots: .encoding { ["count": $0.snapshot, "double": 2 * $0.snapshot] })
      ])
    store.actions.dispatch(action: .add(3))
    log.flush()  // the log's queue writes the lines
    #expect(lines.all.first?.contains(#""state":{"count":3,"double":6}"#) == true)
    #expect(
      try Recording(jsonLines: lines.text).entries.first?.state(as: [String: Int].self) == ["count": 3, "double": 6])
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("a state that cannot be encoded leaves the line readable, with `stateError` instead of `state`")
  func stateThatCannotBeEncoded() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [log.middleware(label: "counter", snapshots: .encoding { _ in Unencodable() })])
    store.actions.dispatch(action: .add(3))
    log.flush()  // the log's queue writes the lines
    #expect(try Self.keys(lines.all) == [["action", "durationNanoseconds", "outcome", "store", "stateError", "time"]])
    #expect(try Recording(jsonLines: lines.text).entries.map { try $0.action(as: CounterAction.self) } == [.add(3)])
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("logs written before the fields existed still read, with none of them")
  func oldLogsStillRead() throws {
    let text = """
      {"action":{"add":{"_0":2}},"durationNanoseconds":2125,"outcome":"committed","store":"counter","time":"2026-11-23T03:07:49.123Z"}
      {"action":{"add":{"_0":-1}},"outcome":"cancelled","store":"counter","time":"2026-11-23T03:07:49.124Z"}
      """
    let recording = try Recording(jsonLines: text)
    #expect(recording.entries.count == 2)
    #expect(recording.entries.allSatisfy { $0.sequence == nil && $0.holds.isEmpty && !$0.hasState })
    #expect(recording.entries.allSatisfy { $0.cancelledBy == nil && $0.dispatch == nil })
    #expect(try recording.entries[0].state(as: Int.self) == nil)
    let travel = try TimeTravel(recording, label: "counter", from: CounterState(), mutations: .init())
    #expect(travel.snapshots == [0, 2, 2])
  }

  @Test("an error line of a log with `sequence` is still read as the log's error")
  func errorLineWithSequence() {
    let text = #"{"error":"the action X could not be encoded: no","sequence":1,"store":"s"}"#
    #expect {
      try Recording(jsonLines: text)
    } throws: { error in
      "\(error)".contains("the log has an error here: the action X could not be encoded")
    }
  }

  @Test("each field written by a log is read back by Recording")
  func everyFieldReadBack() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let holder = HoldingMiddleware<EveryField>()
    let store = Store<TaggedState<EveryField>>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(holder), log.middleware(label: "one", snapshots: .snapshot)])
    Store<TaggedState<EveryField>>.actions.dispatch(action: .add(1))
    let held = try #require(holder.take())
    DispatchQueue.global().sync { held() }
    log.flush()
    let entry = try #require(try Recording(jsonLines: lines.text).entries.first)
    #expect(entry.sequence == 1)
    #expect(try entry.state(as: Int.self) == 1)
    #expect(entry.holds.map(\.middleware) == ["HoldingMiddleware<EveryField>"])
    #expect(entry.dispatch != nil)
    #expect(entry.cancelledBy == nil)
    withExtendedLifetime(store) {}
  }
  @Test("TimeTravel reads the states a log wrote, with no mutations, and they match the committed ones")
  func timeTravelFromRecordedStates() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let stores = ["a", "b"].map { label in
      Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate,
        middlewares: [AnyMiddleware(NoNegativeAmounts()), log.middleware(label: label, snapshots: .snapshot)])
    }
    stores[0].actions.dispatch(action: .add(2))
    stores[1].actions.dispatch(action: .set(10))
    stores[0].actions.dispatch(action: .add(-5))
    stores[0].actions.dispatch(action: .add(3))
    log.flush()  // the log's queue writes the lines
    let recording = try Recording(jsonLines: lines.text)
    let read = try TimeTravel(recording, label: "a", from: CounterState())
    let replayed = try TimeTravel(recording, label: "a", from: CounterState(), mutations: .init())
    #expect(read.snapshots == [0, 2, 2, 2, 5])
    #expect(read.snapshots == replayed.snapshots)
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
    #expect(await read.goTo(4, in: store))
    #expect(store.computed.count.value == 5)
    withExtendedLifetime(stores) {}  // optimized builds free a store after its last use
  }

  @Test("TimeTravel from recorded states names a committed line that has no state")
  func timeTravelNeedsStates() throws {
    let text = #"{"action":{"add":{"_0":2}},"outcome":"committed","store":"a","time":"2026-11-23T03:07:49.123Z"}"#
    let error = #expect(throws: RecordingError.self) {
      try TimeTravel(try Recording(jsonLines: text), label: "a", from: CounterState())
    }
    #expect(error?.line == 1)
    #expect(error?.description.contains(#"no "state""#) == true)
  }

  @Test("Replay and TimeTravel refuse a log whose lines are out of their `sequence`, naming the line")
  func outOfSequence() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .sequence)
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "a")])
    for amount in 1...3 { store.actions.dispatch(action: .add(amount)) }
    log.flush()  // the log's queue writes the lines
    var swapped = lines.all
    swapped.swapAt(1, 2)
    let recording = try Recording(jsonLines: swapped.joined())
    let target = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
    let replay = Replay(recording)
    replay.route("a", to: target.actions)
    let error = await #expect(throws: RecordingError.self) { try await replay.run() }
    #expect(error?.line == 3)
    #expect(target.computed.count.value == 0)  // nothing dispatched
    #expect(throws: RecordingError.self) {
      try TimeTravel(recording, label: "a", from: CounterState(), mutations: .init())
    }
    // In order, it replays.
    let inOrder = Replay(try Recording(jsonLines: lines.text))
    inOrder.route("a", to: target.actions)
    #expect(try await inOrder.run() == 3)
    #expect(target.computed.count.value == 6)
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }
}

private enum EveryField {}

/// A snapshot whose encoding always fails.
private struct Unencodable: Encodable, Sendable {
  struct Refused: Error {}

  func encode(to encoder: any Encoder) throws {
    throw Refused()
  }
}

/// A state type per test (`Tag`), so that the global dispatches of one reach no other test's stores.
// `@unchecked Sendable`: `count` is guarded by `lock`.
final class TaggedState<Tag>: State, Snapshotting, @unchecked Sendable {
  typealias Action = CounterAction
  typealias Mutations = TaggedMutations<Tag>

  private let lock = NSLock()
  // Guarded by `lock`.
  private var count = 0

  var snapshot: Int { lock.withLock { count } }

  static func restore(_ snapshot: Int) -> CounterAction { .set(snapshot) }

  func apply(_ action: CounterAction) {
    lock.withLock {
      switch action {
      case .add(let amount): count += amount
      case .set(let value): count = value
      case .reset: count = 0
      }
    }
  }
}

struct TaggedMutations<Tag>: Mutations {
  func commit(action: CounterAction, state: TaggedState<Tag>) {
    state.apply(action)
  }
}

/// Holds every action: keeps its `Proceed` for the test to decide, or to let go.
final class HoldingMiddleware<Tag>: Middleware, @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var proceeds: [Proceed] = []

  func intercept(action: CounterAction, state: TaggedState<Tag>, proceed: Proceed) {
    lock.withLock { proceeds.append(proceed) }
  }

  /// The oldest `Proceed` not taken yet, if any.
  func take() -> Proceed? {
    lock.withLock { proceeds.isEmpty ? nil : proceeds.removeFirst() }
  }
}
