import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

@Suite("Reading values and gating observers")
struct ReadingAndGatingTests {
  @Test("inv3: two variables whose observers read each other's value, set from two threads, never deadlock")
  func inv3_readingValueNeverWaitsForDelivery() {
    if let last = setTwoVariablesReadingEachOther(from: 0, { $0 }) {
      #expect(last.0 == 5_000 && last.1 == 5_000)
    }
  }

  @Test("inv5: a value read on another thread during a delivery is the one being delivered or a later one")
  func inv5_valueReadDuringDeliveryIsNotStale() {
    let variable = Variable(0)
    let stale = Counter()
    let disposable = variable.signal.observe { delivered in
      if variable.value < delivered { stale.increment() }
    }
    race(threads: 3, iterations: 2_000) { _, _ in variable.modify { $0 += 1 } }
    #expect(stale.value == 0)
    #expect(variable.value == 6_000)
    disposable.dispose()
  }

  @Test("inv3: a read on another thread during the delivery of a modify (a value not in a word) does not wait for it")
  func inv3_readDuringTheDeliveryOfAModifyDoesNotWait() {
    let variable = Variable("a")  // not a plain word: reads take the value lock
    let inDelivery = DispatchSemaphore(value: 0)
    let readDone = DispatchSemaphore(value: 0)
    let readerFinished = DispatchSemaphore(value: 0)
    let read = LockedValue<String?>(nil)
    let readWaited = LockedValue(false)
    let disposable = variable.signal.observe { value in
      guard value == "b" else { return }
      inDelivery.signal()
      // The read must complete while this delivery still runs. A read that waits for the
      // delivery runs only once the timeout below ends it.
      if readDone.wait(timeout: .now() + 2) == .timedOut { readWaited.withLock { $0 = true } }
    }
    Thread {
      inDelivery.wait()
      let value = variable.value
      read.withLock { $0 = value }
      readDone.signal()
      readerFinished.signal()
    }.start()
    variable.modify { $0 = "b" }
    readerFinished.wait()
    #expect(!readWaited.current, "a read on another thread waited for the delivery of a modify")
    #expect(read.current == "b")
    disposable.dispose()
  }

  @Test("inv6: once dispose() has returned, an observe(on:) observer is never called, even by a call in flight")
  func inv6_observeOnNoCallAfterDispose() {
    let queue = DispatchQueue(label: "observe-on-dispose")
    let sink = Sink<Int>()
    let entered = DispatchSemaphore(value: 0)
    let returned = DispatchSemaphore(value: 0)
    let hasReturned = LockedValue(false)
    let late = Counter()
    // The transform runs between the executor's hop and the user's observer: it holds a call in
    // flight while another thread disposes.
    let disposable = sink.signal.observe(on: .queue(queue))
      .map { value in
        entered.signal()
        _ = returned.wait(timeout: .now() + 1)
        return value
      }
      .observe { _ in if hasReturned.current { late.increment() } }
    sink.send(value: 1)
    entered.wait()
    let disposer = Thread {
      disposable.dispose()
      hasReturned.withLock { $0 = true }
      returned.signal()
    }
    disposer.start()
    queue.sync {}
    #expect(waitUntil { hasReturned.current })
    #expect(late.value == 0, "the observer was called after dispose() returned")
  }

  @Test("inv6: an observe(on:) observer may dispose its own observation from inside a call")
  func inv6_observeOnDisposeFromInsideTheObserver() {
    let sink = Sink<Int>()
    let seen = Recorder<Int>()
    let disposable = Box<(any Disposable)?>(nil)
    disposable.value = sink.signal.observe(on: .immediate).observe { value in
      seen.append(value)
      disposable.value?.dispose()
    }
    sink.send(value: 1)
    sink.send(value: 2)
    #expect(seen.values == [1])
  }

  @Test("inv6: a producer signal's observer is never called after dispose(), whatever the producer does")
  func inv6_producerSignalGatedAfterDispose() {
    // Set by the producer while `observe` runs, on this thread, which then reads it.
    let send = Box<(@Sendable (Int) -> Void)?>(nil)
    let signal = Signal<Int> { observer in
      send.value = observer
      observer(0)  // synchronous sends during observe still arrive
      return AnyDisposable()  // does not stop the producer
    }
    let seen = Recorder<Int>()
    let disposable = signal.observe { seen.append($0) }
    send.value?(1)
    disposable.dispose()
    send.value?(2)
    #expect(seen.values == [0, 1])
    #expect(disposable.isDisposed)

    let mapped = Recorder<Int>()
    let mappedDisposable = signal.map { $0 * 10 }.observe { mapped.append($0) }
    send.value?(3)
    mappedDisposable.dispose()
    send.value?(4)
    #expect(mapped.values == [0, 30])
  }

  @Test("inv6: a producer signal's observer is never called after dispose() returned, under racing sends")
  func inv6_producerSignalGatedUnderRace() {
    let late = Counter()
    for _ in 0..<300 {
      let send = LockedValue<(@Sendable (Int) -> Void)?>(nil)
      let signal = Signal<Int> { observer in
        send.withLock { $0 = observer }
        return AnyDisposable()
      }
      let returned = LockedValue(false)
      let disposable = signal.observe { _ in if returned.current { late.increment() } }
      let producer = send.current
      runOnThreads(2) { thread in
        if thread == 0 {
          for value in 0..<200 { producer?(value) }
        } else {
          yieldThread()
          disposable.dispose()
          returned.withLock { $0 = true }
        }
      }
    }
    #expect(late.value == 0)
  }

  @Test("inv6: a scope never keeps disposables that are already disposed, nor grows with short observations")
  func inv6_scopeNeverKeepsDisposedDisposables() {
    let scope = DisposableScope()
    let done = AnyDisposable()
    done.dispose()
    scope += done
    #expect(scope.count == 0)

    let sink = Sink<Int>()
    for _ in 0..<10_000 {
      let observation = sink.signal.observe { _ in }
      scope += observation
      observation.dispose()
    }
    #expect(scope.count < 64, "a scope kept \(scope.count) disposed observations")
    let live = sink.signal.observe { _ in }
    scope += live
    scope.dispose()
    #expect(live.isDisposed)
  }

  @Test("inv6: a scope keeps an observe(on:) observation of an ended upstream while a value waits")
  func inv6_scopeKeepsObserveOnWithQueuedValueOfEndedUpstream() {
    let queue = DispatchQueue(label: "inv6.ended-upstream")
    queue.suspend()
    let calls = Counter()
    let scope = DisposableScope()
    // A constant's signal ends at once, after queueing its value on the suspended queue.
    let observation = Constant(1).signal.observe(on: .queue(queue)).observe { _ in calls.increment() }
    #expect(!observation.isDisposed, "a value still waits for the observer")
    scope += observation
    #expect(scope.count == 1)
    scope.dispose()
    queue.resume()
    queue.sync {}
    #expect(calls.value == 0, "the observer ran after the scope's dispose() returned")
  }

  @Test("inv6: pruning a scope keeps an observe(on:) observation of a freed sink while its value waits")
  func inv6_scopePruningKeepsObserveOnWithQueuedValueOfFreedSink() {
    let queue = DispatchQueue(label: "inv6.freed-sink")
    queue.suspend()
    let calls = Counter()
    let scope = DisposableScope()
    var sink: Sink<Int>? = Sink<Int>()
    scope += sink!.signal.observe(on: .queue(queue)).observe { _ in calls.increment() }
    sink!.send(value: 1)  // waits on the suspended queue
    sink = nil
    for _ in 0..<40 { scope += AnyDisposable() }  // past the count at which adding prunes
    scope.dispose()
    queue.resume()
    queue.sync {}
    #expect(calls.value == 0, "the observer ran after the scope's dispose() returned")
  }

  @Test("inv6: an observe(on:) observation of a freed sink reports disposed once no value waits, and is pruned")
  func inv6_observeOnOfFreedSinkIsDisposedOnceDrained() {
    let queue = DispatchQueue(label: "inv6.drained")
    let scope = DisposableScope()
    var sink: Sink<Int>? = Sink<Int>()
    let observation = sink!.signal.observe(on: .queue(queue)).observe { _ in }
    scope += observation
    sink!.send(value: 1)
    sink = nil
    queue.sync {}
    #expect(observation.isDisposed)
    for _ in 0..<40 { scope += AnyDisposable() }
    #expect(scope.count < 41, "pruning kept an observation that nothing can call any more")
  }

  @Test("inv3: adding to a scope never waits for another sink's delivery on another thread, even when it prunes")
  func inv3_scopePruningDoesNotWaitForOtherDeliveries() {
    let x = Sink<Int>()
    let y = Sink<Int>()
    let scope = DisposableScope()
    scope += y.signal.observe { _ in }  // an observation of y that the next pruning asks about
    for _ in 0..<30 { scope += AnyDisposable() }  // the next add prunes
    let yDelivering = DispatchSemaphore(value: 0)
    let xDelivering = DispatchSemaphore(value: 0)
    let observesX = x.signal.observe { value in
      guard value == 1 else { return }
      yDelivering.wait()
      xDelivering.signal()
      scope += AnyDisposable()  // prunes while y delivers on the other thread
    }
    let observesY = y.signal.observe { value in
      guard value == 1 else { return }
      yDelivering.signal()
      xDelivering.wait()
      x.send(value: 2)  // waits for x's delivery: only this one direction
    }
    let finished = finishOnThreads(2, within: 10) { thread in
      if thread == 0 { x.send(value: 1) } else { y.send(value: 1) }
    }
    #expect(finished, "deadlock: pruning waited for y's delivery, which waited for x's")
    guard finished else {
      _ = Unmanaged.passRetained(Box((x, y, scope, observesX, observesY)))  // left with its threads
      return
    }
    #expect(scope.count > 0)
    scope.dispose()
  }

  @Test("inv6: a disposed observation whose sink was delivering when it was added is dropped at a later pruning")
  func inv6_observationKeptWhileItsSinkDeliveredIsPrunedLater() {
    let sink = Sink<Int>()
    let scope = DisposableScope()
    let observation = sink.signal.observe { _ in }
    observation.dispose()
    let delivering = DispatchSemaphore(value: 0)
    let added = DispatchSemaphore(value: 0)
    let blocker = sink.signal.observe { _ in
      delivering.signal()
      added.wait()
    }
    let sent = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      sink.send(value: 1)
      sent.signal()
    }
    delivering.wait()
    scope += observation  // the sink delivers on the other thread: cannot tell at once
    added.signal()
    sent.wait()
    for _ in 0..<40 { scope += AnyDisposable() }
    #expect(scope.count == 40, "the disposed observation is still kept")
    blocker.dispose()
    scope.dispose()
  }

  @Test("inv5: observing a variable from inside its own modify body stops with a Flux message")
  func inv5_observeInsideModifyStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let variable = Variable(0)
      variable.modify { _ in
        _ = variable.signal.observe { _ in }
      }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: "), "stopped without a Flux message: \(message)")
  }

  @Test("inv5: reading a variable from inside its own modify body stops with a Flux message")
  func inv5_readInsideModifyStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let variable = Variable(0)
      variable.modify { _ in _ = variable.value }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: "), "stopped without a Flux message: \(message)")
  }

  @Test("inv5: setting a variable from inside its own modify body stops with a Flux message")
  func inv5_setInsideModifyStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let variable = Variable(0)
      variable.modify { _ in variable.value = 1 }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: "), "stopped without a Flux message: \(message)")
  }
}

@Suite("observe(on: .mainThread) and reentrancy", .serialized)
struct MainThreadReentrancyTests {
  @Test("inv13: a value set from inside an observe(on: .mainThread) observer is delivered after it, not nested")
  func inv13_observeOnMainThreadDoesNotNest() {
    let variable = Variable(1)
    let log = Recorder<String>()
    let disposable = variable.signal.observe(on: .mainThread).observe { value in
      guard value <= 0 else { return }
      log.append("begin \(value)")
      if value < 0 { variable.value = 0 }
      log.append("end \(value)")
    }
    DispatchQueue.global().async { variable.value = -5 }
    #expect(waitUntil { log.values.count == 4 })
    #expect(log.values == ["begin -5", "end -5", "begin 0", "end 0"])
    disposable.dispose()
  }

  @Test("inv13: observe(on: .mainThread) keeps the order of changes set from a thread, then from main work")
  func inv13_observeOnMainThreadKeepsOrderOfChangesFromEverywhere() async {
    let variable = Variable(0)
    let seen = Recorder<Int>()
    let observation = variable.signal.observe(on: .mainThread).observe { seen.append($0) }
    #expect(await eventually { seen.values == [0] })
    await onMainQueue {
      // Main-thread work, as a commit on a `.mainThread` store runs.
      Executor.mainThread.execute {
        let set = DispatchSemaphore(value: 0)
        Thread {
          variable.value = 1  // its delivery waits for the main queue
          set.signal()
        }.start()
        set.wait()
        variable.value = 2  // delivered by this work's runner, after the one waiting
      }
    }
    #expect(await eventually { seen.values.count == 3 })
    #expect(seen.values == [0, 1, 2], "the observer ended on a stale value: \(seen.values)")
    observation.dispose()
  }
}

/// Each way of touching a variable from inside its own `modify` body, for a value in a word and
/// a value behind the value lock: every one stops with Flux's message, none deadlocks.
@Suite("Touching a variable inside its own modify body")
struct TouchInsideModifyTests {
  enum Touch: String, Codable, Sendable, CaseIterable {
    case read, set, changeInPlace, observe, stream, readConstant, modifyAgain
  }

  @Test(
    "inv5: every touch of a variable inside its own modify body stops with the Flux message", arguments: Touch.allCases)
  func inv5_touchInsideModifyStopsWithMessage(touch: Touch) async {
    for wordSized in [true, false] {
      let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        [touch = touch as Touch, wordSized = wordSized as Bool] in
        if wordSized {
          let variable = Variable(0)
          variable.modify { _ in TouchInsideModifyTests.apply(touch, to: variable, newValue: 1) }
        } else {
          let variable = Variable("a")
          variable.modify { _ in TouchInsideModifyTests.apply(touch, to: variable, newValue: "b") }
        }
      }
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(message.contains("Flux: a Variable was"), "\(touch), \(wordSized ? "word" : "locked"): \(message)")
    }
  }

  static func apply<Value: Sendable>(_ touch: Touch, to variable: Variable<Value>, newValue: Value) {
    switch touch {
    case .read: _ = variable.value
    case .set: variable.value = newValue
    case .changeInPlace:
      var other = newValue
      swap(&variable.value, &other)
    case .observe: _ = variable.signal.observe { _ in }
    case .stream: _ = variable.values
    case .readConstant: _ = variable.constant.value
    case .modifyAgain: variable.modify { $0 = newValue }
    }
  }
}
