import FluxCore
import FluxReactive
import FluxTesting
import Foundation
import Testing

/// A tally of its own: the global dispatches of these tests reach no other test's stores.
final class ApartTally: State, SessionTestable {
  typealias Action = TallyAction
  typealias Mutations = TallyMutations

  fileprivate let count = Variable(0)

  var snapshot: Int { count.value }

  static func restore(_ snapshot: Int) -> TallyAction { .set(snapshot) }

  static func sessionStart(label: String) -> ApartTally { ApartTally() }
}

enum TallyAction: Codable, Equatable, Sendable {
  case add(Int)
  case set(Int)
}

struct TallyMutations: Mutations {
  func commit(action: TallyAction, state: ApartTally) {
    switch action {
    case .add(let amount): state.count.modify { $0 += amount }
    case .set(let value): state.count.value = value
    }
  }
}

/// A tally for the race of stores apart with global dispatch: no other test dispatches to it.
final class RacedTally: State, SessionTestable {
  typealias Action = TallyAction
  typealias Mutations = RacedTallyMutations

  fileprivate let count = Variable(0)

  var snapshot: Int { count.value }

  static func restore(_ snapshot: Int) -> TallyAction { .set(snapshot) }

  static func sessionStart(label: String) -> RacedTally { RacedTally() }
}

struct RacedTallyMutations: Mutations {
  func commit(action: TallyAction, state: RacedTally) {
    switch action {
    case .add(let amount): state.count.modify { $0 += amount }
    case .set(let value): state.count.value = value
    }
  }
}

/// Counts the commits of every store of ``ApartTally`` it serves, as a shared middleware.
struct TallyCommits: SharedMiddleware {
  let seen = Variable(0)

  func didCommit(action: any Sendable, state: any State) {
    if state is ApartTally { seen.modify { $0 += 1 } }
  }
}

@Suite("StoreTester of a recorded session")
struct StoreTesterSessionTests {
  @Test("a store replayed as recorded passes: commits, cancels and states as the session's")
  func asRecorded() async {
    let tester = StoreTester<BasketState>(
      session: "basket:ann", mutations: .init(), middlewares: [AnyMiddleware(NoEmptyPuts())])
    await tester.dispatch(
      .put(quantity: 2, name: "Milk"), sessionLine: 1, recorded: #"[{"name": "Milk", "quantity": 2}]"#)
    await tester.dispatch(
      .put(quantity: 0, name: "Eggs"), committed: [], cancelled: [.put(quantity: 0, name: "Eggs")], sessionLine: 2)
    // Keys in any order, and numbers written either way, are the same state.
    await tester.dispatch(
      .note("semi", on: "Milk"), sessionLine: 3, recorded: #"[{"quantity": 2.0, "note": "semi", "name": "Milk"}]"#)
    #expect(tester.store.computed.state.owner == "basket:ann")
    tester.finish()
  }

  @Test(
    "a state that differs fails at the session's line, with the action, the recorded and the actual state side by side")
  func differenceNamesLineAndShowsBoth() async {
    let tester = StoreTester<BasketState>(session: "basket:ann", mutations: .init())
    await tester.dispatch(
      .put(quantity: 2, name: "Milk"), sessionLine: 1, recorded: #"[{"name": "Milk", "quantity": 2}]"#)
    await withKnownIssue {
      await tester.dispatch(
        .put(quantity: 1, name: "Eggs"), sessionLine: 7,
        recorded: #"[{"name": "Milk", "quantity": 2}, {"name": "Eggs", "quantity": 2}]"#)
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      let rows = text.split(separator: "\n").map(String.init)
      return rows.first
        == #"line 7 of the session, basket:ann, after dispatching put(quantity: 1, name: "Eggs"): the state is not as recorded"#
        && rows.contains { $0.hasPrefix("    recorded") && $0.hasSuffix("actual") }
        && rows.contains {
          $0.hasPrefix("  ~ ") && $0.contains(#"{"name": "Eggs", "quantity": 2}"#)
            && $0.hasSuffix(#"|   {"name": "Eggs", "quantity": 1}"#)
        }
        && rows.contains { $0.hasPrefix("    ") && $0.contains(#"{"name": "Milk", "quantity": 2},"#) }
    }
    tester.finish()
  }

  @Test("only the first difference fails: the actions after it are dispatched, and not checked")
  func firstDifferenceOnly() async {
    let tester = StoreTester<BasketState>(session: "basket:ann", mutations: .init())
    await withKnownIssue {
      await tester.dispatch(.put(quantity: 1, name: "Eggs"), sessionLine: 3, recorded: #"[]"#)
    } matching: { issue in
      issue.comments.map(\.rawValue).joined().hasPrefix("line 3 of the session")
    }
    await tester.dispatch(.put(quantity: 1, name: "Tea"), sessionLine: 4, recorded: #"[]"#)
    await tester.dispatch(.empty, committed: [.take(name: "never")], sessionLine: 5, recorded: #"[1]"#)
    #expect(tester.store.computed.state.snapshot.isEmpty)
    tester.finish()
  }

  @Test("an action committed where the session cancelled it fails at the session's line")
  func commitWhereCancelled() async {
    // No middleware: the put the session's middleware cancelled commits.
    let tester = StoreTester<BasketState>(session: "basket:ann", mutations: .init())
    await withKnownIssue {
      await tester.dispatch(
        .put(quantity: 0, name: "Eggs"), committed: [], cancelled: [.put(quantity: 0, name: "Eggs")], sessionLine: 2)
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.hasPrefix("line 2 of the session, basket:ann, after dispatching put(quantity: 0, name: \"Eggs\")")
    }
    tester.finish()
  }

  @Test("a recorded state that is not JSON fails with what is wrong with it")
  func recordedNotJSON() async {
    let tester = StoreTester<BasketState>(session: "basket:ann", mutations: .init())
    await withKnownIssue {
      await tester.dispatch(.empty, sessionLine: 1, recorded: "[1,")
    } matching: { issue in
      issue.comments.map(\.rawValue).joined().contains("the recorded state is not JSON")
    }
    tester.finish()
  }

  @Test("the store of a session is apart: no global dispatch reaches it, and no shared middleware wraps it")
  func apartFromGlobalDispatch() async {
    let shared = TallyCommits()
    let registration = SharedMiddlewares.add(shared)
    defer { registration.remove() }
    let tester = StoreTester<ApartTally>(session: "tally", mutations: .init())
    let other = Store<ApartTally>(state: .init(), mutations: .init(), executor: .immediate)
    Store<ApartTally>.actions.dispatch(action: .add(5))
    #expect(other.computed.state.snapshot == 5)
    await tester.dispatch(.add(1), sessionLine: 1, recorded: "1")
    #expect(shared.seen.value == 1)  // the other store's commit only
    tester.finish()
    withExtendedLifetime(other) {}  // optimized builds free a store after its last use
  }

  @Test("stores apart, made and freed on several threads while global dispatches run, never receive one")
  func apartStoresRaceWithGlobalDispatch() async {
    let stop = Variable(false)
    let dispatcher = Thread {
      while !stop.value { Store<RacedTally>.actions.dispatch(action: .add(1000)) }
    }
    dispatcher.start()
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          for round in 0..<100 {
            let tester = StoreTester<RacedTally>(session: "tally \(task)", mutations: .init())
            await tester.dispatch(.add(round), sessionLine: 1, recorded: "\(round)")
            await tester.dispatch(.add(1), sessionLine: 2, recorded: "\(round + 1)")
            tester.finish()
          }
        }
      }
    }
    stop.value = true
  }

  @Test("restore takes the state recorded at a line, through the state's restore action, and checks it")
  func restoreTakesTheRecordedState() async {
    let tester = StoreTester<BasketState>(session: "basket:ann", mutations: .init())
    await tester.restore(sessionLine: 430, recorded: #"[{"name": "Tea", "note": "green", "quantity": 3}]"#)
    await tester.dispatch(
      .put(quantity: 1, name: "Tea"), sessionLine: 431, recorded: #"[{"name": "Tea", "note": "green", "quantity": 4}]"#)
    #expect(tester.store.computed.state.snapshot == [BasketItem(name: "Tea", quantity: 4, note: "green")])
    tester.finish()
  }

  @Test("a recorded state that is not the state's snapshot cannot be taken, and says why")
  func restoreOfAnotherType() async {
    let tester = StoreTester<BasketState>(session: "basket:ann", mutations: .init())
    await withKnownIssue {
      await tester.restore(sessionLine: 3, recorded: #"{"name": "Tea"}"#)
    } matching: { issue in
      issue.comments.map(\.rawValue).joined().hasPrefix(
        "line 3 of the session, basket:ann: the recorded state is not a Array<BasketItem>, so the store cannot take it")
    }
    tester.finish()
  }
}
