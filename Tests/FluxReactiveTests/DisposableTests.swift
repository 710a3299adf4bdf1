import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

@Suite("Disposables")
struct DisposableTests {
  @Test("inv6: dispose is idempotent and thread-safe; an observation ends once")
  func inv6_disposeIdempotentAndThreadSafe() {
    for _ in 0..<200 {
      let sink = Sink<Int>()
      let disposable = sink.signal.observe { _ in }
      let runs = Counter()
      let any = AnyDisposable { runs.increment() }
      race(threads: 4, iterations: 3) { _, _ in
        disposable.dispose()
        any.dispose()
      }
      #expect(disposable.isDisposed)
      #expect(any.isDisposed)
      #expect(runs.value == 1)
      #expect(sink.core.observerCount == 0)
    }
  }

  @Test("inv6: a scope made from disposables keeps none that is disposed already")
  func inv6_scopeInitKeepsNoDisposed() {
    let done = AnyDisposable()
    done.dispose()
    let live = AnyDisposable()
    let scope = DisposableScope([done, live] as [any Disposable])
    #expect(scope.count == 1)
    scope.dispose()
    #expect(live.isDisposed)
  }

  @Test("inv6: an AnyDisposable is disposed once its closure has returned; a call meanwhile does not wait")
  func inv6_anyDisposableTakesEffectWhenItsClosureReturns() {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let disposable = AnyDisposable {
      entered.signal()
      release.wait()
    }
    let first = DispatchSemaphore(value: 0)
    Thread {
      disposable.dispose()
      first.signal()
    }.start()
    entered.wait()
    #expect(!disposable.isDisposed, "the closure is still running")
    disposable.dispose()  // returns at once: the first call runs the closure
    #expect(!disposable.isDisposed)
    release.signal()
    first.wait()
    #expect(disposable.isDisposed)
  }

  @Test("inv6: a gated observation is disposed once no call can start; a scope holding it meanwhile waits")
  func inv6_gatedObservationTakesEffectBeforeItReportsDisposed() throws {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let producerSend = LockedValue<(@Sendable (Int) -> Void)?>(nil)
    let signal = Signal<Int> { send in
      producerSend.withLock { $0 = send }
      return AnyDisposable()
    }
    let scopeReturned = LockedValue(false)
    let lateCalls = Counter()
    let observation = signal.observe { value in
      if scopeReturned.current { lateCalls.increment() }
      if value == 0 {
        entered.signal()
        release.wait()
      }
    }
    let gated = try #require(observation as? GatedObservation<Int>)
    let producerDone = DispatchSemaphore(value: 0)
    Thread {
      let send = producerSend.current!
      for value in 0...1_000 { send(value) }
      producerDone.signal()
    }.start()
    entered.wait()
    // A first dispose() waits for the call in flight.
    let firstDisposed = DispatchSemaphore(value: 0)
    Thread {
      observation.dispose()
      firstDisposed.signal()
    }.start()
    #expect(waitUntil { gated.isDisposedWithoutWaiting != false }, "the first dispose() never began")
    #expect(!observation.isDisposed, "a call is still running, and more may start")
    // A scope given the observation now must not drop it as disposed: its dispose() waits too.
    let scopeDisposed = DispatchSemaphore(value: 0)
    Thread {
      let scope = DisposableScope()
      scope += observation
      scope.dispose()
      scopeReturned.withLock { $0 = true }
      scopeDisposed.signal()
    }.start()
    release.signal()
    scopeDisposed.wait()
    firstDisposed.wait()
    producerDone.wait()
    #expect(observation.isDisposed)
    #expect(lateCalls.value == 0, "calls started after the scope's dispose() returned")
  }

  @Test("inv6: an observer that disposed its own observation finds it disposed, while another dispose() waits")
  func inv6_selfDisposedObservationReportsDisposedInsideItsCall() throws {
    let send = LockedValue<(@Sendable (Int) -> Void)?>(nil)
    let signal = Signal<Int> { observer in
      send.withLock { $0 = observer }
      return AnyDisposable()
    }
    let entered = DispatchSemaphore(value: 0)
    let otherBegan = DispatchSemaphore(value: 0)
    let observation = LockedValue<(any Disposable)?>(nil)
    let seen = LockedValue<Bool?>(nil)
    let disposable = signal.observe { _ in
      entered.signal()
      otherBegan.wait()
      observation.current?.dispose()  // returns: the gate is closed, no call can start
      seen.withLock { $0 = observation.current?.isDisposed }
    }
    observation.withLock { $0 = disposable }
    let gated = try #require(disposable as? GatedObservation<Int>)
    let finished = finishOnThreads(2, within: 10) { index in
      if index == 0 {
        send.current?(1)
      } else {
        entered.wait()
        Thread {
          while gated.isDisposedWithoutWaiting == false { usleep(100) }
          otherBegan.signal()
        }.start()
        disposable.dispose()  // waits for the call in flight
      }
    }
    #expect(finished, "the two dispose() calls deadlocked")
    #expect(seen.current == true, "dispose() returned inside the call, yet isDisposed was false")
    send.withLock { $0 = nil }
  }

  @Test("inv16: a scope disposes what it holds outside its lock: their closures may use the scope")
  func inv16_scopeDisposesOutsideItsLock() {
    let scope = DisposableScope()
    let seen = LockedValue<Bool?>(nil)
    scope += AnyDisposable {
      let disposed = scope.isDisposed
      seen.withLock { $0 = disposed }
    }
    #expect(finishOnThreads(1, within: 10) { _ in scope.dispose() }, "the scope's dispose deadlocked")
    #expect(seen.current != nil)
  }

  @Test("inv16: a producer signal's observer is released after its gate's lock: its deinit may send to it")
  func inv16_gatedObserverReleasedOutsideTheGateLock() {
    /// Frees itself by having another thread send to the observation's gate, and waiting for
    /// that send: under the gate's lock, that thread would never get the lock.
    final class SendsWhenFreed: Sendable {
      let producerSend: LockedValue<(@Sendable (Int) -> Void)?>
      init(_ producerSend: LockedValue<(@Sendable (Int) -> Void)?>) { self.producerSend = producerSend }
      deinit {
        let send = producerSend.current
        let sent = DispatchSemaphore(value: 0)
        Thread {
          send?(1)
          sent.signal()
        }.start()
        sent.wait()
      }
    }
    let producerSend = LockedValue<(@Sendable (Int) -> Void)?>(nil)
    let signal = Signal<Int> { send in
      producerSend.withLock { $0 = send }
      return AnyDisposable()
    }
    let disposable: any Disposable
    do {
      let payload = SendsWhenFreed(producerSend)
      disposable = signal.observe { [payload] _ in _ = payload }
    }
    #expect(
      finishOnThreads(1, within: 10) { _ in disposable.dispose() }, "the observer was released under its gate's lock")
  }

  @Test("inv6: a disposed observer is released at once, with what it captured")
  func inv6_disposedObserverReleasedAtOnce() {
    let sink = Sink<Int>()
    let flag = DeallocFlag()
    let variableFlag = DeallocFlag()
    let variable = Variable(0)
    let disposables: [any Disposable] = [
      sink.signal.observe { [tracked = Tracked(flag)] _ in _ = tracked },
      variable.signal.map { $0 + 1 }.observe { [tracked = Tracked(variableFlag)] _ in _ = tracked },
    ]
    #expect(!flag.isFreed)
    for disposable in disposables { disposable.dispose() }
    #expect(flag.isFreed)
    #expect(variableFlag.isFreed)
  }

  @Test("inv6: disposal does not scan the observers: 200,000 disposals in random order", .timeLimit(.minutes(1)))
  func inv6_disposalIsNotLinear() {
    let sink = Sink<Int>()
    var disposables = (0..<200_000).map { _ in sink.signal.observe { _ in } }
    var generator = SystemRandomNumberGenerator()
    disposables.shuffle(using: &generator)
    for disposable in disposables { disposable.dispose() }
    #expect(sink.core.observerCount == 0)
  }

  @Test("inv6: disposal keeps the order and membership of the other observers")
  func inv6_disposalKeepsOthers() {
    let sink = Sink<Int>()
    let seen = Recorder<Int>()
    let disposables = (0..<100).map { index in sink.signal.observe { _ in seen.append(index) } }
    for (index, disposable) in disposables.enumerated() where index % 3 != 0 { disposable.dispose() }
    sink.send(value: 0)
    #expect(seen.values == Array(stride(from: 0, to: 100, by: 3)))
    #expect(disposables[1].isDisposed)
    #expect(!disposables[0].isDisposed)
  }

  @Test("inv6: a scope disposes everything on dispose(), and newcomers at once after that")
  func inv6_scopeDisposesAll() {
    let scope = DisposableScope()
    let first = AnyDisposable()
    let second = AnyDisposable()
    scope += first
    scope.add(disposable: second)
    #expect(!first.isDisposed)
    scope.dispose()
    #expect(first.isDisposed && second.isDisposed && scope.isDisposed)
    let late = AnyDisposable()
    scope += late
    #expect(late.isDisposed)
  }

  @Test("inv6: a scope disposes everything when freed; += on a nil scope disposes at once")
  func inv6_scopeDisposesOnDeinit() {
    let kept = AnyDisposable()
    var scope: DisposableScope? = DisposableScope([kept as any Disposable])
    scope += AnyDisposable()
    scope = nil
    #expect(kept.isDisposed)
    let orphan = AnyDisposable()
    scope += orphan
    #expect(orphan.isDisposed)
  }

  @Test("inv6: a scope is thread-safe under concurrent add and dispose")
  func inv6_scopeConcurrent() {
    for _ in 0..<100 {
      let scope = DisposableScope()
      let added = Recorder<AnyDisposable>()
      race(threads: 3, iterations: 20) { thread, index in
        if thread == 0, index == 10 {
          scope.dispose()
        } else {
          let disposable = AnyDisposable()
          added.append(disposable)
          scope += disposable
        }
      }
      scope.dispose()
      #expect(added.values.allSatisfy { $0.isDisposed })
    }
  }

  @Test(
    "inv6: a second dispose(), on another thread while the first waits for a delivery, returns only once it took effect",
    arguments: ["observe(duringScopeOf:)", "DisposableScope"])
  func inv6_secondDisposeWaitsForTheFirst(kind: String) {
    let sink = Sink<Int>()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let blocker = sink.signal.observe { value in
      if value == 1 {
        entered.signal()
        release.wait()
      }
    }
    let secondReturned = DeallocFlag()
    let callsAfterReturn = Counter()
    let owner = ScopeOwner()
    let observer: @Sendable (Int) -> Void = { _ in
      if secondReturned.isFreed { callsAfterReturn.increment() }
    }
    let disposable: any Disposable
    if kind == "DisposableScope" {
      let scope = DisposableScope()
      scope += sink.signal.observe(observer)
      disposable = scope
    } else {
      disposable = sink.signal.observe(duringScopeOf: owner, observer)
    }
    let sent = DispatchSemaphore(value: 0)
    Thread {
      sink.send(value: 1)  // the blocker holds the delivery; the observer is next
      sent.signal()
    }.start()
    entered.wait()
    let firstStarted = DispatchSemaphore(value: 0)
    let firstReturned = DispatchSemaphore(value: 0)
    Thread {
      firstStarted.signal()
      disposable.dispose()  // waits for the delivery in flight
      firstReturned.signal()
    }.start()
    firstStarted.wait()
    // Give the first call time to start disposing and wait for the delivery.
    Thread.sleep(forTimeInterval: 0.05)
    // Asked without waiting: `isDisposed` of an observation may wait for the delivery.
    let early = (disposable as? any PromptlyDisposedQuery)?.isDisposedWithoutWaiting ?? disposable.isDisposed
    #expect(early != true, "disposed before it took effect")
    Thread {
      disposable.dispose()
      secondReturned.markFreed()
    }.start()
    Thread.sleep(forTimeInterval: 0.05)
    #expect(!secondReturned.isFreed, "the second dispose() returned while the delivery could still call the observer")
    release.signal()
    sent.wait()
    firstReturned.wait()
    #expect(waitUntil { secondReturned.isFreed })
    #expect(callsAfterReturn.value == 0)
    #expect(disposable.isDisposed)
    blocker.dispose()
    withExtendedLifetime(owner) {}
  }

  @Test("inv6: a scope drops observe(duringScopeOf:) observations whose sinks are gone")
  func inv6_scopeDropsEndedScopedObservations() {
    let owner = ScopeOwner()
    let scope = DisposableScope()
    var last: (any Disposable)?
    for _ in 0..<2_000 {
      let sink = Sink<Int>()
      let observation = sink.signal.observe(duringScopeOf: owner) { _ in }
      scope += observation
      last = observation
    }
    #expect(last?.isDisposed == true, "a scoped observation ends with its sink")
    #expect(scope.count < 100, "the scope keeps \(scope.count) ended observations")
    withExtendedLifetime(owner) {}
  }
}

extension DisposableTests {
  @Test(
    "inv6: a gated observer is released by dispose(), while a producer or a value on an executor still holds its gate")
  func inv6_gatedObserverReleasedAtDisposeWhileItsGateLives() {
    // The producer keeps the function it was handed, and never stops.
    let producerSend = LockedValue<(@Sendable (Int) -> Void)?>(nil)
    let signal = Signal<Int> { send in
      producerSend.withLock { $0 = send }
      return AnyDisposable()
    }
    let producerFlag = DeallocFlag()
    let producerObservation = signal.observe { [tracked = Tracked(producerFlag)] _ in _ = tracked }
    producerObservation.dispose()
    #expect(producerFlag.isFreed, "the function the producer keeps kept the disposed observer")

    let manual = ManualExecutor()
    let sink = Sink<Int>()
    let seen = Recorder<Int>()
    let scheduledFlag = DeallocFlag()
    let scheduled = sink.signal.observe(on: manual.executor).observe { [tracked = Tracked(scheduledFlag)] value in
      _ = tracked
      seen.append(value)
    }
    sink.send(value: 1)  // waits on the executor
    scheduled.dispose()
    #expect(scheduledFlag.isFreed, "the value waiting on the executor kept the disposed observer")
    manual.drain()
    #expect(seen.values.isEmpty)
    producerSend.withLock { $0 = nil }
  }

  @Test("inv16: an AnyDisposable runs its closure outside its lock: the closure may ask it whether it is disposed")
  func inv16_anyDisposableRunsItsClosureOutsideItsLock() {
    let answer = LockedValue<Bool?>(nil)
    let holder = LockedValue<AnyDisposable?>(nil)
    let disposable = AnyDisposable {
      let disposed = holder.current?.isDisposed
      answer.withLock { $0 = disposed }
    }
    holder.withLock { $0 = disposable }
    let finished = finishOnThreads(1, within: 5) { _ in disposable.dispose() }
    #expect(finished, "the closure ran under the disposable's lock")
    guard finished else { return }  // the stuck thread keeps what it uses
    #expect(answer.current == false, "disposal takes effect once the closure has returned")
    #expect(disposable.isDisposed)
    holder.withLock { $0 = nil }
  }

  @Test("inv16: a scope asks what it keeps whether it is disposed outside its lock")
  func inv16_scopeAsksWhetherDisposedOutsideItsLock() {
    /// A disposable of the user's whose `isDisposed` looks at the scope that keeps it.
    final class AsksItsScope: Disposable {
      let scope = LockedValue<DisposableScope?>(nil)
      var isDisposed: Bool { scope.current?.isDisposed ?? false }
      func dispose() { scope.withLock { $0 = nil } }
    }
    let scope = DisposableScope()
    let asking = AsksItsScope()
    asking.scope.withLock { $0 = scope }
    let finished = finishOnThreads(1, within: 5) { _ in
      scope += asking
      for _ in 0..<40 { scope += AnyDisposable() }  // past the count at which adding prunes
    }
    #expect(finished, "the scope asked a disposable of the user's under its own lock")
    guard finished else { return }
    scope.dispose()
  }

  @Test(
    "inv16: a disposed sink observer is released after the sink's lock: its deinit may wait for a send on another thread"
  )
  func inv16_disposedObserverReleasedOutsideTheSinkLock() {
    let sink = Sink<Int>()
    let disposable: any Disposable
    do {
      let payload = RunsElsewhereWhenFreed { sink.send(value: 1) }
      disposable = sink.signal.observe { [payload] _ in _ = payload }
    }
    #expect(
      finishOnThreads(1, within: 5) { _ in disposable.dispose() }, "the observer was released under the sink's lock")
  }

  @Test(
    "inv16: a freed sink releases its observers after its lock: their deinit may observe its signal on another thread")
  func inv16_freedSinkReleasesObserversOutsideItsLock() {
    let holder = LockedValue<Sink<Int>?>(Sink<Int>())
    let signal = holder.current!.signal
    do {
      let payload = RunsElsewhereWhenFreed { signal.observe { _ in }.dispose() }
      signal.observe { [payload] _ in _ = payload }
    }
    #expect(
      finishOnThreads(1, within: 5) { _ in _ = holder.takeValue() },
      "the freed sink released its observers under its lock")
  }

  @Test(
    "inv16: disposing a scoped observation waits for a delivery outside its own lock: the delivery may ask it whether it is disposed"
  )
  func inv16_scopedObservationWaitsForADeliveryOutsideItsLock() {
    let sink = Sink<Int>()
    let owner = ScopeOwner()
    let observation = LockedValue<(any Disposable)?>(nil)
    let entered = DispatchSemaphore(value: 0)
    let disposing = DispatchSemaphore(value: 0)
    let answer = LockedValue<Bool?>(nil)
    // Added first: holds the delivery while another thread disposes the scoped observation.
    let blocker = sink.signal.observe { _ in
      entered.signal()
      disposing.wait()
      usleep(50_000)  // the disposing thread now waits for this delivery
      let disposed = observation.current?.isDisposed
      answer.withLock { $0 = disposed }
    }
    observation.withLock { $0 = sink.signal.observe(duringScopeOf: owner) { _ in } }
    let finished = finishOnThreads(2, within: 5) { thread in
      if thread == 0 {
        sink.send(value: 1)
      } else {
        entered.wait()
        disposing.signal()
        observation.current?.dispose()
      }
    }
    #expect(finished, "dispose() waited for the delivery holding the observation's lock")
    guard finished else { return }
    #expect(answer.current == false)
    #expect(observation.current?.isDisposed == true)
    blocker.dispose()
  }
}
