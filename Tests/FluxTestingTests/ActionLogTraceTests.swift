import Dispatch
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("ActionLog: holds, cancellations and global dispatches")
struct ActionLogTraceTests {
  @Test("a global dispatch to three stores writes one `dispatch` on their three lines; one store's, none")
  func globalDispatchSharesOneID() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .dispatch)
    let stores = [Executor.immediate, .queue(DispatchQueue(label: "fan-out")), .immediate].enumerated().map {
      Store<TaggedState<FanOut>>(
        state: .init(), mutations: .init(), executor: $0.element, middlewares: [log.middleware(label: "s\($0.offset)")])
    }
    await Store<TaggedState<FanOut>>.actions.dispatchAndWait(action: .add(1))
    await Store<TaggedState<FanOut>>.actions.dispatchAndWait(action: .add(2))
    for store in stores { await store.actions.dispatchAndWait(action: .add(3)) }
    log.flush()
    let entries = try Recording(jsonLines: lines.text).entries
    #expect(entries.count == 9)
    let byAction = try Dictionary(grouping: entries) { "\(try $0.action(as: CounterAction.self))" }
    let first = try #require(byAction["add(1)"]?.map(\.dispatch))
    let second = try #require(byAction["add(2)"]?.map(\.dispatch))
    #expect(Set(first).count == 1 && first[0] != nil)
    #expect(Set(second).count == 1 && second[0] != nil)
    #expect(first[0] != second[0])
    #expect(Set(try #require(byAction["add(1)"]).map(\.store)) == ["s0", "s1", "s2"])
    #expect(byAction["add(3)"]?.map(\.dispatch) == [nil, nil, nil])
    withExtendedLifetime(stores) {}  // optimized builds free a store after its last use
  }

  @Test("inv14: a middleware that holds, then proceeds, is named in `holds`, with how long it held")
  func holdThenProceed() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let holder = HoldingMiddleware<HoldProceed>()
    let store = Store<TaggedState<HoldProceed>>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeTagged<HoldProceed>()), AnyMiddleware(holder), log.middleware(label: "a")])
    store.actions.dispatch(action: .add(4))
    log.flush()  // the log's queue writes the lines
    #expect(lines.all.isEmpty)  // held: not ended yet
    let proceed = try #require(holder.take())
    Thread.sleep(forTimeInterval: 0.002)
    DispatchQueue.global().sync { proceed() }
    log.flush()
    let entry = try #require(try Recording(jsonLines: lines.text).entries.first)
    #expect(entry.outcome == .committed)
    #expect(entry.holds.map(\.middleware) == ["HoldingMiddleware<HoldProceed>"])
    // Held at least as long as the test waited before deciding.
    #expect(try #require(entry.holds.first).nanoseconds >= 2_000_000)
    #expect(entry.cancelledBy == nil)
    #expect(
      lines.all.first?.contains(#""holds":[{"middleware":"HoldingMiddleware<HoldProceed>","nanoseconds":"#) == true)
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("inv14: a middleware that holds, then cancels, is named in `holds` and in `cancelledBy`")
  func holdThenCancel() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: [.holds, .cancelledBy])
    let holder = HoldingMiddleware<HoldCancel>()
    let store = Store<TaggedState<HoldCancel>>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(holder), log.middleware(label: "a")])
    store.actions.dispatch(action: .add(4))
    let proceed = try #require(holder.take())
    DispatchQueue.global().sync { proceed.cancel() }
    log.flush()
    let entry = try #require(try Recording(jsonLines: lines.text).entries.first)
    #expect(entry.outcome == .cancelled)
    #expect(entry.holds.map(\.middleware) == ["HoldingMiddleware<HoldCancel>"])
    #expect(entry.cancelledBy == "HoldingMiddleware<HoldCancel>")
    #expect(entry.dispatch == nil && entry.sequence == nil)
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("a middleware that cancels within its interception is `cancelledBy`, with no hold")
  func cancelWithoutHold() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let store = Store<TaggedState<CancelAtOnce>>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoNegativeTagged<CancelAtOnce>()), log.middleware(label: "a")])
    store.actions.dispatch(action: .add(-4))
    store.actions.dispatch(action: .add(4))
    log.flush()  // the log's queue writes the lines
    let entries = try Recording(jsonLines: lines.text).entries
    #expect(entries.map(\.cancelledBy) == ["NoNegativeTagged<CancelAtOnce>", nil])
    #expect(entries.allSatisfy { $0.holds.isEmpty })
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("inv14: a held action whose last `Proceed` is let go undecided is cancelled by the middleware that held it")
  func abandonedHold() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let holder = HoldingMiddleware<Abandoned>()
    let store = Store<TaggedState<Abandoned>>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(holder), log.middleware(label: "a")])
    store.actions.dispatch(action: .add(1))  // intercepted inline, on `.immediate`: held now
    var proceed = holder.take()
    #expect(proceed != nil)
    proceed = nil  // the last copy: nobody can decide any more; a worker thread drains the cancellation
    #expect(lines.waitForCount(1))
    log.flush()
    let entry = try #require(try Recording(jsonLines: lines.text).entries.first)
    #expect(entry.outcome == .cancelled)
    #expect(entry.cancelledBy == "HoldingMiddleware<Abandoned>")
    #expect(entry.holds.map(\.middleware) == ["HoldingMiddleware<Abandoned>"])
    withExtendedLifetime((proceed, store)) {}
  }

  @Test("several threads: `sequence` strictly increasing, and each global dispatch's lines share one id")
  func sequenceAndDispatchUnderRace() throws {
    for _ in 0..<20 {
      let lines = Lines()
      let log = ActionLog(output: lines.output, fields: .all)
      let stores = (0..<3).map { index in
        Store<TaggedState<Race>>(
          state: .init(), mutations: .init(),
          executor: index == 0 ? .immediate : .queue(DispatchQueue(label: "r\(index)")),
          middlewares: [log.middleware(label: "s\(index)", snapshots: .snapshot)])
      }
      DispatchQueue.concurrentPerform(iterations: 4) { thread in
        for amount in 1...50 {
          if thread % 2 == 0 {
            Store<TaggedState<Race>>.actions.dispatch(action: .add(thread * 1000 + amount))
          } else {
            stores[amount % 3].actions.dispatch(action: .add(thread * 1000 + amount))
          }
        }
      }
      let total = 2 * 50 * 3 + 2 * 50
      #expect(lines.waitForCount(total))
      log.flush()
      let entries = try Recording(jsonLines: lines.text).entries
      #expect(entries.map(\.sequence) == (1...total).map { UInt64($0) })
      let global = try Dictionary(grouping: entries.filter { $0.dispatch != nil }) {
        "\(try $0.action(as: CounterAction.self))"
      }
      #expect(global.count == 100)
      #expect(global.values.allSatisfy { group in group.count == 3 && Set(group.map(\.dispatch)).count == 1 })
      #expect(Set(global.values.map { $0[0].dispatch }).count == 100)
      #expect(entries.filter { $0.dispatch == nil }.count == 100)
      withExtendedLifetime(stores) {}
    }
  }
}

private enum FanOut {}
private enum HoldProceed {}
private enum HoldCancel {}
private enum CancelAtOnce {}
private enum Abandoned {}
private enum Race {}

/// Cancels every negative `add`, at once.
struct NoNegativeTagged<Tag>: Middleware {
  func intercept(action: CounterAction, state: TaggedState<Tag>, proceed: Proceed) {
    if case .add(let amount) = action, amount < 0 { proceed.cancel() } else { proceed() }
  }
}

extension ActionLogTraceTests {
  @Test(
    "a store's didCommit that dispatches to another logged store on .immediate lends it neither its dispatch nor its holds"
  )
  func traceOfTheDispatchingStoreStaysOffTheOtherStoresLine() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let target = Store<TaggedState<LeakTarget>>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "b")])
    let holder = HoldingMiddleware<LeakSource>()
    let source = Store<TaggedState<LeakSource>>(
      state: .init(), mutations: .init(), executor: .immediate,
      middlewares: [
        AnyMiddleware(holder), AnyMiddleware(RelayTagged<LeakSource, LeakTarget>(to: target.actions)),
        log.middleware(label: "a"),
      ])
    Store<TaggedState<LeakSource>>.actions.dispatch(action: .add(1))
    let proceed = try #require(holder.take())
    proceed()
    log.flush()
    let entries = try Recording(jsonLines: lines.text).entries
    #expect(entries.map(\.store) == ["b", "a"])
    let (b, a) = (entries[0], entries[1])
    #expect(a.dispatch != nil)
    #expect(a.holds.map(\.middleware) == ["HoldingMiddleware<LeakSource>"])
    #expect(b.dispatch == nil)
    #expect(b.holds.isEmpty)
    withExtendedLifetime((source, target)) {}
  }
}

private enum LeakSource {}
private enum LeakTarget {}

/// In its `didCommit`, dispatches the action to a store of another tag.
struct RelayTagged<Tag, Target>: Middleware {
  let target: Actions<TaggedState<Target>>

  init(to target: Actions<TaggedState<Target>>) {
    self.target = target
  }

  func didCommit(action: CounterAction, state: TaggedState<Tag>) {
    target.dispatch(action: action)
  }
}
