import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

/// A main-actor target that keeps its own binding in a scope, as a view model does.
@MainActor final class SelfBindingTarget {
  var count = 0
  var text: String? {
    didSet { textChanges += 1 }
  }
  var textChanges = 0
  let scope = DisposableScope()
  let flag: DeallocFlag

  init(_ flag: DeallocFlag) {
    self.flag = flag
  }

  deinit { flag.markFreed() }
}

/// Runs `body` on a thread of its own and resumes once it has returned, without blocking the
/// caller's thread (the main actor's queue keeps running meanwhile).
func onThread(_ body: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    Thread {
      body()
      continuation.resume()
    }.start()
  }
}

@Suite("Binding lifetime under threads")
struct BindingLifetimeTests {
  @Test("inv6: a binding disposed on another thread is never called after dispose() returned")
  @MainActor
  func inv6_bindingDisposedOffMainNeverCalledAfter() async {
    let late = Counter()
    for _ in 0..<100 {
      let sink = Sink<Int>()
      let target = Target()
      let returned = LockedValue(false)
      let binding = sink.signal.bind(to: target) { target, value in
        if returned.current { late.increment() }
        target.count = value
      }
      await onThread {
        for value in 0..<50 {
          sink.send(value: value)
          if value == 25 {
            binding.dispose()
            returned.withLock { $0 = true }
          }
        }
      }
      // Lets every value queued for the main queue run (and find the binding disposed).
      _ = await onMainQueue { true }
      withExtendedLifetime(target) {}
    }
    #expect(late.value == 0, "a binding ran after dispose() returned")
  }

  @Test("inv6: a binding disposed on another thread while its call runs waits for that call")
  @MainActor
  func inv6_bindingDisposeWaitsForCallInFlight() async {
    let sink = Sink<Int>()
    let target = Target()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let returned = LockedValue(false)
    let sawReturnedInside = LockedValue(false)
    let late = Counter()
    let binding = sink.signal.bind(to: target) { target, value in
      if returned.current { late.increment() }
      if value == 1 {
        entered.signal()
        _ = release.wait(timeout: .now() + 2)
        sawReturnedInside.withLock { $0 = returned.current }
      }
      target.count = value
    }
    // The value hops to the main queue; the main actor is free (this test suspends).
    let disposer = Task.detached {
      sink.send(value: 1)
      entered.wait()
      let done = DispatchSemaphore(value: 0)
      Thread {
        binding.dispose()
        returned.withLock { $0 = true }
        done.signal()
      }.start()
      usleep(20_000)
      release.signal()
      done.wait()
      sink.send(value: 2)
    }
    await disposer.value
    _ = await onMainQueue { true }
    #expect(!sawReturnedInside.current, "dispose() returned while the call still ran")
    #expect(late.value == 0)
    #expect(target.count == 1)
  }

  @Test("inv6: a binding that disposes itself from inside its call gets nothing more")
  @MainActor
  func inv6_bindingDisposesItselfFromInside() async {
    let sink = Sink<Int>()
    let target = Target()
    let holder = Box<(any Disposable)?>(nil)
    let seen = Recorder<Int>()
    holder.value = sink.signal.bind(to: target) { _, value in
      seen.append(value)
      holder.value?.dispose()
      sink.send(value: value + 100)  // sent from inside: queued, and must not arrive
    }
    await onThread {
      sink.send(value: 1)
      sink.send(value: 2)
    }
    _ = await onMainQueue { true }
    #expect(seen.values == [1])
    #expect(holder.value?.isDisposed == true)
    #expect(sink.core.observerCount == 0)
  }

  @Test("inv8: a target that keeps its own binding in a scope is freed, and its binding ends with it")
  @MainActor
  func inv8_targetKeepingItsBindingIsFreed() async {
    let variable = Variable(0)
    let flag = DeallocFlag()
    let closureFlag = DeallocFlag()
    weak var weakTarget: SelfBindingTarget?
    do {
      let target = SelfBindingTarget(flag)
      weakTarget = target
      let tracked = Tracked(closureFlag)
      target.scope += variable.signal.bind(to: target, on: .immediate) { target, value in
        _ = tracked
        target.count = value
      }
      target.scope += variable.signal.map { "\($0)" }.bind(to: target, \.text, on: .mainThread)
      variable.value = 1
    }
    #expect(weakTarget == nil)
    #expect(flag.isFreed)
    #expect(closureFlag.isFreed, "the binding's closure outlived its target")
    #expect(variable.core.observerCount == 0)
  }

  @Test("inv7: a target freed on another thread while values wait for the main queue gets none of them")
  @MainActor
  func inv7_targetFreedOffMainWhileValuesWait() async {
    let calledAfterFree = Counter()
    for _ in 0..<100 {
      let sink = Sink<Int>()
      let flag = DeallocFlag()
      let holder = Box<Target?>(Target(flag))
      let binding = sink.signal.bind(to: holder.value!) { target, value in
        if target.flag.isFreed { calledAfterFree.increment() }
        target.count = value
      }
      await onThread {
        for value in 0..<40 {
          sink.send(value: value)
          if value == 20 { holder.value = nil }
        }
      }
      _ = await onMainQueue { true }
      // The next value ends the binding: the target is gone.
      sink.send(value: -1)
      _ = await onMainQueue { true }
      #expect(flag.isFreed)
      #expect(binding.isDisposed)
      #expect(sink.core.observerCount == 0)
    }
    #expect(calledAfterFree.value == 0)
  }

  @Test("a key path binding whose setter sets its own source again delivers each value once, in order")
  @MainActor
  func keyPathBindingSetterSetsItsSource() async {
    let variable = Variable("a")
    let target = Target()
    let seen = Recorder<String>()
    let mirror = variable.signal.observe { seen.append($0) }
    let binding = variable.signal.bind(to: target, \.text)
    // A second binding to the same property, whose closure sets the source from inside a call.
    let echo = variable.signal.bind(to: target) { _, value in
      if value == "b" { variable.value = "c" }
    }
    variable.value = "b"
    await onThread { variable.value = "d" }
    #expect(await eventuallyOnMainActor { target.text == "d" })
    #expect(seen.values == ["a", "b", "c", "d"])
    binding.dispose()
    echo.dispose()
    mirror.dispose()
  }
}

@Suite("Scopes under threads")
struct ScopeLifetimeTests {
  @Test("inv6: everything added to a scope while another thread disposes it ends disposed")
  func inv6_scopeAddRacingDispose() {
    for _ in 0..<200 {
      let scope = DisposableScope()
      let added = LockedValue<[AnyDisposable]>([])
      runOnThreads(3) { thread in
        if thread == 2 {
          yieldThread()
          scope.dispose()
        } else {
          for _ in 0..<100 {
            let disposable = AnyDisposable()
            added.withLock { $0.append(disposable) }
            scope += disposable
          }
        }
      }
      scope.dispose()
      #expect(added.current.allSatisfy { $0.isDisposed })
    }
  }

  @Test("inv6: a disposable whose disposal disposes its scope again ends, with the others, once")
  func inv6_reentrantScopeDisposal() {
    let scope = DisposableScope()
    let runs = Counter()
    let others = (0..<5).map { _ in AnyDisposable { runs.increment() } }
    scope += AnyDisposable { scope.dispose() }
    for other in others { scope += other }
    scope += AnyDisposable { scope += AnyDisposable { runs.increment() } }
    scope.dispose()
    #expect(scope.isDisposed)
    #expect(runs.value == 6)
    #expect(others.allSatisfy { $0.isDisposed })
  }

  @Test("inv7: an object freed from inside its scoped observer on many threads is never called after")
  func inv7_scopedObjectFreedInsideObserverOnManyThreads() {
    let calledAfterFree = Counter()
    for _ in 0..<100 {
      let send = LockedValue<(@Sendable (Int) -> Void)?>(nil)
      let signal = Signal<Int> { observer in
        send.withLock { $0 = observer }
        return AnyDisposable()
      }
      let flag = DeallocFlag()
      let holder = LockedValue<Target?>(Target(flag))
      let observation = signal.observe(duringScopeOf: holder.current!) { value in
        if flag.isFreed { calledAfterFree.increment() }
        if value == 30 { holder.withLock { $0 = nil } }
      }
      let producer = send.current
      race(threads: 3, iterations: 60) { _, index in producer?(index) }
      #expect(flag.isFreed)
      #expect(observation.isDisposed)
    }
    #expect(calledAfterFree.value == 0)
  }
}

@Suite("Disposing from two threads at once")
struct ConcurrentSelfDisposalTests {
  @Test(
    "inv6: an observe(on:) observer that ends itself while another thread ends it from the source's delivery does not deadlock"
  )
  func inv6_selfDisposalRacingDisposalInsideTheSourceDelivery() throws {
    let sink = Sink<Int>()
    let queue = DispatchQueue(label: "self-disposal")
    let holder = LockedValue<(any Disposable)?>(nil)
    let inCall = DispatchSemaphore(value: 0)
    let delivering = DispatchSemaphore(value: 0)
    let observation = sink.signal.observe(on: .queue(queue)).observe { value in
      guard value == 1 else { return }
      inCall.signal()
      delivering.wait()  // another thread now holds the sink's delivery turn
      holder.current?.dispose()  // ends itself from inside the call, as the docs advise
    }
    holder.withLock { $0 = observation }
    let gated = try #require(observation as? GatedObservation<Int>)
    let bystander = sink.signal.observe { value in
      guard value == 2 else { return }
      delivering.signal()
      // The call on the queue has closed its gate and goes on to remove its upstream observer,
      // which waits for this delivery; this thread ends the observation too.
      while gated.isDisposedWithoutWaiting != true { usleep(100) }
      observation.dispose()
    }
    let finished = finishOnThreads(1, within: 5) { _ in
      sink.send(value: 1)
      inCall.wait()
      sink.send(value: 2)
    }
    #expect(finished, "the two dispose() calls deadlocked")
    if finished {
      bystander.dispose()
      #expect(observation.isDisposed)
    }
  }

  @Test(
    "inv7: a binding whose target is gone, ended on another thread from its source's delivery as its next value arrives, does not deadlock the main queue"
  )
  func inv7_bindingEndingWithItsTargetRacingDisposalInsideTheSourceDelivery() async {
    await #expect(processExitsWith: .success) {
      let sink = Sink<Int>()
      let binding: any Disposable = await MainActor.run {
        let target = Target()  // freed when this closure returns
        return sink.signal.bind(to: target) { target, value in target.count = value }
      }
      guard let late = binding as? LateDisposable else { exit(2) }
      let bystander = sink.signal.observe { _ in
        // The main queue finds the target gone and ends the binding, which waits for this
        // delivery to remove its upstream observer; meanwhile this thread ends it too, as a
        // scope torn down here would.
        while !late.hasStartedDisposing { usleep(100) }
        usleep(200_000)
        binding.dispose()
      }
      let done = DispatchSemaphore(value: 0)
      Thread {
        sink.send(value: 1)
        done.signal()
      }.start()
      if done.wait(timeout: .now() + 5) == .timedOut { exit(1) }
      withExtendedLifetime(bystander) {}
    }
  }
}
