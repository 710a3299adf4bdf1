import FluxCore
import FluxReactive
import FluxTesting
import Foundation
import Testing

@Suite("TimeTravel")
struct TimeTravelTests {
  @Test("goTo(k) sets a live store to its state after the first k actions of the recording")
  func goTo() async throws {
    let travel = try TimeTravel(try ReplayTests.session(), label: "a", from: CounterState(), mutations: .init())
    // The session: a +2, b =10, a -5 (cancelled), b +1, a +3.
    #expect(travel.count == 5)
    #expect(travel.snapshots == [0, 2, 2, 2, 2, 5])
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    tester.actions.dispatch(action: .set(99))
    await tester.expect(committed: [.set(99)])
    await travel.goTo(1, in: tester.store)
    await tester.expect(committed: [.set(2)])
    tester.expect(reading: \.count.value, equals: 2)
    await travel.goTo(5, in: tester.store)
    tester.expect(reading: \.count.value, equals: 5)
    await travel.goTo(0, in: tester.store)
    await tester.expect(committed: [.set(5), .set(0)])
    tester.finish()
  }

  @MainActor
  @Test("goTo from the main actor dispatches there: an .immediate store commits on the main queue")
  func goToDispatchesFromTheCallersIsolation() async throws {
    let travel = try TimeTravel(try ReplayTests.session(), label: "a", from: CounterState(), mutations: .init())
    let key = mainQueueKey
    let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate)
    let (onMain, offMain) = (Flag(), Flag())
    let observation = store.computed.count.signal.observe { value in
      guard value == 5 else { return }
      (DispatchQueue.getSpecific(key: key) == true ? onMain : offMain).set()
    }
    #expect(await travel.goTo(5, in: store))
    observation.dispose()
    #expect(onMain.isSet && !offMain.isSet, "the restore committed off the caller's actor")
  }

  @Test("a label that no action of the log carries is an error that lists the log's labels")
  func unknownLabelIsAnError() throws {
    let error = #expect(throws: RecordingError.self) {
      try TimeTravel(try ReplayTests.session(), label: "A", from: CounterState(), mutations: .init())
    }
    #expect(error?.description == #"no action of the log is labelled "A"; its labels are "a", "b""#)
    // A label whose actions were all cancelled is the log's: its snapshots stay where they began.
    let cancelledOnly = try Recording(
      jsonLines: #"{"action":{"add":{"_0":1}},"outcome":"cancelled","store":"c","time":"2026-11-23T03:07:49.123Z"}"#
        + "\n")
    let travel = try TimeTravel(cancelledOnly, label: "c", from: CounterState(), mutations: .init())
    #expect(travel.snapshots == [0, 0])
    #expect(try TimeTravel(Recording(jsonLines: ""), label: "x", from: CounterState(), mutations: .init()).count == 0)
  }

  @Test("a point outside the recording stops with a message naming it")
  func pointOutsideStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let travel = try TimeTravel(try ReplayTests.session(), label: "a", from: CounterState(), mutations: .init())
      _ = travel.snapshot(after: 6)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("TimeTravel: no point 6 in a recording of 5 actions (0...5)"), "\(message)")
  }

  @Test("building the snapshots makes no store: global dispatches and shared middleware never reach them")
  func noStoreWhileBuilding() throws {
    let line =
      #"{"action":{"add":{"_0":1}},"durationNanoseconds":1,"outcome":"committed","store":"t","#
      + #""time":"2026-11-23T03:07:49.123Z"}"#
    let recording = try Recording(jsonLines: Array(repeating: line + "\n", count: 500).joined())
    let stop = Flag()
    let dispatcher = Thread {
      while !stop.isSet { Store<TravelState>.actions.dispatch(action: .add(1_000_000)) }
    }
    dispatcher.start()
    let watcher = TravelWatcher()
    let shared = SharedMiddlewares.add(watcher)
    for _ in 0..<20 {
      let travel = try TimeTravel(recording, label: "t", from: TravelState(), mutations: .init())
      #expect(travel.snapshots == Array(0...500))
    }
    shared.remove()
    stop.set()
    #expect(watcher.sawTravelState == false, "a shared middleware saw the snapshots being built")
  }
}

/// A counter of its own: global dispatches of other tests never reach it.
private final class TravelState: State, Snapshotting {
  typealias Action = CounterAction
  typealias Mutations = TravelMutations

  let count = Variable(0)

  var snapshot: Int { count.value }

  static func restore(_ snapshot: Int) -> CounterAction { .set(snapshot) }
}

private struct TravelMutations: Mutations {
  func commit(action: CounterAction, state: TravelState) {
    switch action {
    case .add(let amount): state.count.modify { $0 += amount }
    case .set(let value): state.count.value = value
    case .reset: state.count.value = 0
    }
  }
}

/// Notes whether it ever sees a ``TravelState``.
private struct TravelWatcher: SharedMiddleware {
  let seen = Flag()

  var sawTravelState: Bool { seen.isSet }

  func willCommit(action: any Sendable, state: any State) {
    if state is TravelState { seen.set() }
  }
}

/// A flag one thread sets and another reads.
final class Flag: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var value = false

  var isSet: Bool { lock.withLock { value } }

  func set() { lock.withLock { value = true } }
}

/// Set on the main queue once and kept for the whole process: a queue holds its keys by address,
/// so a key freed after a test could be taken for a later key (of another type) at that address.
let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()
