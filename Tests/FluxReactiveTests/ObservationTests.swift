import Dispatch
import FluxCore
import Foundation
import Observation
import Testing

@testable import FluxReactive

/// A counter of `onChange` calls, safe to bump from any thread.
private final class Changes: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var total = 0

  var count: Int { lock.withLock { total } }

  func record() { lock.withLock { total += 1 } }
}

/// Reads what `apply` reads inside `withObservationTracking`, counting each `onChange` call.
private func track(_ changes: Changes, _ apply: () -> Void) {
  withObservationTracking(apply, onChange: { changes.record() })
}

private final class TallyState: State {
  typealias Action = Int
  typealias Mutations = TallyMutations

  fileprivate let total = Variable(0)
  fileprivate let label = Variable("tally")
}

private struct TallyMutations: Mutations {
  func commit(action: Int, state: TallyState) {
    state.total.modify { $0 += action }
  }
}

extension Computed where State == TallyState {
  fileprivate var total: Int { state.total.value }
  fileprivate var label: String { state.label.value }
}

@Suite("Observation")
struct ObservationTests {
  @Test("a variable read inside withObservationTracking calls onChange once for its next change")
  func firesOncePerChange() {
    let variable = Variable(0)
    let changes = Changes()
    track(changes) { _ = variable.value }
    variable.value = 1
    #expect(changes.count == 1)
    #expect(variable.value == 1)
  }

  @Test("nothing after the tracker fired: Observation's one-shot rule")
  func oneShot() {
    let variable = Variable(0)
    let changes = Changes()
    track(changes) { _ = variable.value }
    variable.value = 1
    variable.value = 2
    variable.modify { $0 += 1 }
    #expect(changes.count == 1)
    track(changes) { _ = variable.value }  // tracked again: the next change is heard again
    variable.value = 4
    #expect(changes.count == 2)
  }

  @Test("onChange runs before the change, on the setting thread")
  func onChangeBeforeTheChange() {
    let variable = Variable(0)
    let seen = Recorder<Int>()
    withObservationTracking({ _ = variable.value }, onChange: { seen.append(variable.value) })
    variable.value = 5
    #expect(seen.values == [0])
  }

  @Test("a set of the tracked variable from its own onChange stops with a Flux message")
  func setInsideOnChangeStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let variable = Variable(0)
      withObservationTracking({ _ = variable.value }, onChange: { variable.value = 1 })
      variable.value = 2
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: "), "stopped without a Flux message: \(message)")
  }

  @Test("another variable may be set from onChange")
  func otherSetInsideOnChange() {
    let tracked = Variable(0)
    let other = Variable(0)
    withObservationTracking({ _ = tracked.value }, onChange: { other.value = 1 })
    tracked.value = 2
    #expect(other.value == 1)
    #expect(tracked.value == 2)
  }

  @Test("modify is one change")
  func modifyIsOneChange() {
    let variable = Variable([1])
    let changes = Changes()
    track(changes) { _ = variable.value }
    variable.modify { $0.append(2) }
    #expect(changes.count == 1)
    #expect(variable.value == [1, 2])
  }

  @Test("only what was read is tracked: a change to another variable does not fire")
  func onlyWhatWasRead() {
    let read = Variable(0)
    let other = Variable(0)
    _ = other.value  // read outside tracking: other has a registrar, with no tracker
    let changes = Changes()
    track(changes) { _ = read.value }
    other.value = 1
    other.modify { $0 += 1 }
    #expect(changes.count == 0)
    read.value = 1
    #expect(changes.count == 1)
  }

  @Test("a constant view is tracked through its variable; a fixed constant never fires")
  func constants() {
    let variable = Variable("a")
    let view = variable.constant
    let fixed = Constant(1)
    let changes = Changes()
    track(changes) { _ = (view.value, fixed.value) }
    variable.value = "b"
    #expect(changes.count == 1)
    #expect(view.value == "b")
  }

  @Test("a set that nobody read makes no registrar: one load and one branch")
  func unreadSetMakesNoRegistrar() {
    let variable = Variable(0)
    variable.value = 1
    variable.modify { $0 += 1 }
    #expect(variable.core.registration == nil)
    _ = variable.value
    #expect(variable.core.registration != nil)
  }

  @Test("Computed is tracked through the variables it reads, on .immediate")
  func computedOnImmediate() {
    let store = Store<TallyState>(state: .init(), mutations: .init(), executor: .immediate)
    let changes = Changes()
    track(changes) { _ = store.computed.total }
    store.actions.dispatch(action: 2)
    #expect(changes.count == 1)
    #expect(store.computed.total == 2)
  }

  @Test("a commit to a variable a view did not read does not fire")
  func computedOnlyWhatWasRead() {
    let store = Store<TallyState>(state: .init(), mutations: .init(), executor: .immediate)
    let changes = Changes()
    track(changes) { _ = store.computed.label }
    store.actions.dispatch(action: 2)
    #expect(changes.count == 0)
  }

  @Test("Computed is tracked through a commit on .queue")
  func computedOnQueue() async {
    let queue = DispatchQueue(label: "observation-tests")
    let store = Store<TallyState>(state: .init(), mutations: .init(), executor: .queue(queue))
    let changes = Changes()
    track(changes) { _ = store.computed.total }
    store.actions.dispatch(action: 3)
    #expect(await eventually { changes.count == 1 })
    queue.sync {}
    #expect(store.computed.total == 3)
    #expect(changes.count == 1)
  }

  @Test("Computed is tracked through a commit on .mainThread, and onChange runs on the main queue")
  @MainActor
  func computedOnMainThread() async {
    let store = Store<TallyState>(state: .init(), mutations: .init(), executor: .mainThread)
    let onMain = Recorder<Bool>()
    withObservationTracking(
      { _ = store.computed.total },
      onChange: { onMain.append(DispatchQueue.getSpecific(key: mainQueueKey) != nil) })
    DispatchQueue.global().async { store.actions.dispatch(action: 4) }
    #expect(await eventuallyOnMainActor { store.computed.total == 4 })
    #expect(onMain.values == [true])
  }

  @Test("trackers on several threads each hear one change")
  func concurrentTrackers() {
    let variable = Variable(0)
    let changes = Changes()
    DispatchQueue.concurrentPerform(iterations: 8) { _ in
      track(changes) { _ = variable.value }
    }
    DispatchQueue.concurrentPerform(iterations: 8) { _ in variable.modify { $0 += 1 } }
    #expect(changes.count == 8)
    #expect(variable.value == 8)
  }
  @Test("inv2: a producer that sends again from inside its observer delivers that value after the call, not nested")
  func inv2_producerSendFromInsideObserverIsNotNested() {
    let (signal, send) = Self.producerHandingOutItsSend()
    let log = Recorder<String>()
    let observation = signal.observe { value in
      log.append("begin \(value)")
      if value == 1 { send.current?(2) }
      log.append("end \(value)")
    }
    send.current?(1)
    #expect(log.values == ["begin 1", "end 1", "begin 2", "end 2"])
    observation.dispose()
    send.current?(3)
    #expect(log.values.count == 4)
  }

  @Test("inv6: an observer that disposes its producer observation drops the values it sent itself meanwhile")
  func inv6_disposeInsideDropsValuesSentFromInside() {
    let (signal, send) = Self.producerHandingOutItsSend()
    let log = Recorder<Int>()
    let observation = LockedValue<(any Disposable)?>(nil)
    observation.withLock { held in
      held = signal.observe { value in
        log.append(value)
        if value == 1 {
          send.current?(2)  // waits for the end of this call
          observation.current?.dispose()  // so it never comes
        }
      }
    }
    send.current?(1)
    #expect(log.values == [1])
  }

  @Test("inv4: a producer observer that disposes itself in its call gets nothing sent after, even from inside it")
  func inv4_producerObserverDisposedInItsCallGetsNothingSentAfter() {
    // The producer ignores the disposal and keeps sending: only the gate stands in the way.
    let (signal, send) = Self.producerHandingOutItsSend()
    let log = Recorder<Int>()
    let observation = LockedValue<(any Disposable)?>(nil)
    observation.withLock { held in
      held = signal.observe { value in
        log.append(value)
        if value == 1 {
          observation.current?.dispose()
          send.current?(2)  // sent from inside the call, after the dispose: never delivered
        }
      }
    }
    send.current?(1)
    send.current?(3)
    #expect(log.values == [1])
  }
}

/// Marks the main queue, to tell from `onChange` where it runs.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

@Suite("skipRepeats and latest")
struct SkipRepeatsTests {
  @Test("skipRepeats leaves out values equal to the one before; the first passes")
  func skipsRepeats() {
    let sink = Sink<Int>()
    let seen = Recorder<Int>()
    let disposable = sink.signal.skipRepeats().observe { seen.append($0) }
    for value in [1, 1, 2, 2, 2, 1, 3, 3] { sink.send(value: value) }
    #expect(seen.values == [1, 2, 1, 3])
    disposable.dispose()
  }

  @Test("skipRepeats compares per observation")
  func perObservation() {
    let variable = Variable(0)
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let signal = variable.signal.skipRepeats()
    let one = signal.observe { first.append($0) }
    variable.value = 0
    variable.value = 1
    let two = signal.observe { second.append($0) }
    variable.value = 1
    variable.value = 2
    #expect(first.values == [0, 1, 2])
    #expect(second.values == [1, 2])
    one.dispose()
    two.dispose()
  }

  @Test("inv16: skipRepeats compares and releases the replaced value outside its lock")
  func inv16_skipRepeatsRunsNoUserCodeUnderItsLock() {
    let send = LockedValue<(@Sendable (Payload) -> Void)?>(nil)
    let signal = Signal<Payload> { observer in
      send.withLock { $0 = observer }
      return AnyDisposable()
    }
    let seen = Recorder<Int>()
    let observation = signal.skipRepeats().observe { seen.append($0.id) }
    let finished = finishOnThreads(1, within: 10) { _ in
      let producer = send.current!
      // The deinit of value 1, replaced by value 2, sends value 3 on the same thread.
      producer(Payload(id: 1, onDeinit: DeinitAction { producer(Payload(id: 3)) }))
      producer(Payload(id: 2))
    }
    #expect(finished, "deadlock: a replaced value's deinit ran under skipRepeats' lock")
    guard finished else {
      _ = Unmanaged.passRetained(Box((observation, send)))  // left behind with its thread
      return
    }
    #expect(seen.values == [1, 2, 3])
    observation.dispose()
  }

  @Test("latest holds a signal's last value, tracked by Observation, until its owner is freed")
  func latestValue() {
    final class Owner: Sendable {}
    let sink = Sink<String>()
    var owner: Owner? = Owner()
    let latest = sink.signal.latest(startingWith: "none", duringScopeOf: owner!)
    #expect(latest.value == "none")
    let changes = Changes()
    track(changes) { _ = latest.value }
    sink.send(value: "one")
    #expect(changes.count == 1)
    #expect(latest.value == "one")
    owner = nil
    sink.send(value: "two")
    #expect(latest.value == "one")
    #expect(sink.core.observerCount == 0)
  }

}

extension ObservationTests {
  /// A producer signal, and the function it sends with to its latest observer.
  static func producerHandingOutItsSend() -> (Signal<Int>, LockedValue<(@Sendable (Int) -> Void)?>) {
    let send = LockedValue<(@Sendable (Int) -> Void)?>(nil)
    let signal = Signal<Int> { observer in
      send.withLock { $0 = observer }
      return AnyDisposable {}
    }
    return (signal, send)
  }
}

/// Runs an action when freed.
private final class DeinitAction: Sendable {
  let action: @Sendable () -> Void

  init(_ action: @escaping @Sendable () -> Void) {
    self.action = action
  }

  deinit { action() }
}

/// A value compared by `id` alone, which may run an action when its last copy goes.
private struct Payload: Equatable, Sendable {
  let id: Int
  var onDeinit: DeinitAction?

  static func == (lhs: Payload, rhs: Payload) -> Bool { lhs.id == rhs.id }
}
