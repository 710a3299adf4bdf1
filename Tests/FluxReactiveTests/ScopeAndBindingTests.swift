import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

final class Target: @unchecked Sendable {
  var text: String?
  var count = 0
  let flag: DeallocFlag

  init(_ flag: DeallocFlag = DeallocFlag()) {
    self.flag = flag
  }

  deinit { flag.markFreed() }
}

@Suite("Scoped observing and bindings")
struct ScopeAndBindingTests {
  @Test("inv7: observe(duringScopeOf:) never calls the observer after the object is freed")
  func inv7_scopedObserverStops() {
    let sink = Sink<Int>()
    var object: Target? = Target()
    let seen = Recorder<Int>()
    let capturedFlag = DeallocFlag()
    let disposable = sink.signal.observe(duringScopeOf: object!) { [tracked = Tracked(capturedFlag)] value in
      _ = tracked
      seen.append(value)
    }
    sink.send(value: 1)
    object = nil
    #expect(!capturedFlag.isFreed)
    sink.send(value: 2)
    #expect(seen.values == [1])
    #expect(disposable.isDisposed)
    #expect(capturedFlag.isFreed, "resources go at the first value after the object is freed")
    #expect(sink.core.observerCount == 0)
  }

  @Test("inv7: under a racing deallocation, the observer never runs after the object is freed")
  func inv7_scopedObserverRace() {
    for _ in 0..<200 {
      let sink = Sink<Int>()
      let flag = DeallocFlag()
      let calledAfterFree = Counter()
      let object = Box<Target?>(Target(flag))
      sink.signal.observe(duringScopeOf: object.value!) { _ in
        if flag.isFreed { calledAfterFree.increment() }
      }
      race(threads: 2, iterations: 50) { thread, index in
        if thread == 0 {
          sink.send(value: index)
        } else if index == 25 {
          object.value = nil
        }
      }
      sink.send(value: -1)
      #expect(calledAfterFree.value == 0)
    }
  }

  @Test("inv7: a binding ends when its target is freed")
  @MainActor
  func inv7_bindingEndsWithTarget() {
    let variable = Variable("a")
    var target: Target? = Target()
    let binding = variable.signal.bind(to: target!, \.text, on: .immediate)
    #expect(target?.text == "a")
    variable.value = "b"
    #expect(target?.text == "b")
    target = nil
    variable.value = "c"
    #expect(binding.isDisposed)
    #expect(variable.core.observerCount == 0)
  }

  @Test("bindings apply on their executor; the main queue by default")
  @MainActor
  func bindingOnMainByDefault() async {
    let key = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    let sink = Sink<Int>()
    let target = Target()
    let onMain = Recorder<Bool>()
    let binding = sink.signal.bind(to: target) { target, value in
      target.count = value
      onMain.append(DispatchQueue.getSpecific(key: key) == 1)
    }
    DispatchQueue.global().async { sink.send(value: 3) }
    // Polls without blocking the main actor, whose queue the binding is delivered on.
    #expect(await eventuallyOnMainActor { onMain.values.count == 1 })
    #expect(onMain.values == [true])
    binding.dispose()
  }

  @Test("observe(on:) drops values still queued on its executor once disposed")
  func observeOnDropsQueuedValues() {
    let manual = ManualExecutor()
    let sink = Sink<Int>()
    let flag = DeallocFlag()
    let seen = Recorder<Int>()
    let disposable = sink.signal.observe(on: manual.executor).observe { [tracked = Tracked(flag)] value in
      _ = tracked
      seen.append(value)
    }
    sink.send(value: 1)
    manual.drain()
    sink.send(value: 2)
    sink.send(value: 3)
    disposable.dispose()
    #expect(flag.isFreed, "the observer is released at dispose, not when the queue drains")
    manual.drain()
    #expect(seen.values == [1])
  }

  @Test("inv6: an observe(on:) observer disposed while its call runs elsewhere is released when dispose() returns")
  func inv6_observeOnObserverDisposedDuringItsCallIsReleasedByDispose() {
    var kept = 0
    for _ in 0..<300 {
      let queue = DispatchQueue(label: "observe-on-release")
      let sink = Sink<Int>()
      let flag = DeallocFlag()
      let inCall = DispatchSemaphore(value: 0)
      let disposable = sink.signal.observe(on: .queue(queue)).observe { [tracked = Tracked(flag)] _ in
        _ = tracked
        inCall.signal()
        usleep(1_000)  // `dispose()` on the test's thread waits for this call
      }
      sink.send(value: 1)
      inCall.wait()
      disposable.dispose()
      if !flag.isFreed { kept += 1 }
      queue.sync {}
    }
    #expect(kept == 0, "the observer outlived dispose() in \(kept) of 300 tries")
  }

  @Test("observe(on:) keeps order on a serial executor")
  func observeOnKeepsOrder() {
    let queue = DispatchQueue(label: "observe-on")
    let sink = Sink<Int>()
    let seen = Recorder<Int>()
    let disposable = sink.signal.observe(on: .queue(queue)).observe { seen.append($0) }
    for value in 0..<1_000 { sink.send(value: value) }
    #expect(waitUntil { seen.values.count == 1_000 })
    #expect(seen.values == Array(0..<1_000))
    disposable.dispose()
  }
}

extension ScopeAndBindingTests {
  @Test("inv7: observe(duringScopeOf:) keeps the object alive through each call; it goes at the call's end")
  func inv7_objectAliveThroughoutTheCall() {
    let sink = Sink<Int>()
    let flag = DeallocFlag()
    let owner = Box<Target?>(Target(flag))
    let freedDuringCall = Recorder<Bool>()
    sink.signal.observe(duringScopeOf: owner.value!) { _ in
      owner.value = nil  // the last other reference goes, as another thread may drop it
      freedDuringCall.append(flag.isFreed)
    }
    sink.send(value: 1)
    #expect(freedDuringCall.values == [false], "the object was freed while its observer ran")
    #expect(flag.isFreed)
    sink.send(value: 2)
    #expect(freedDuringCall.values == [false])
  }

  @Test("inv7: binding to a binder whose target is gone returns a disposed disposable and keeps no observer")
  @MainActor
  func inv7_bindingToFreedTarget() {
    let sink = Sink<Int>()
    let variable = Variable(1)  // its replay would end the binding by itself; a sink's does not
    var target: Target? = Target()
    let binder = Binder<Int>(target: target!) { target, value in target.count = value }
    target = nil
    let sinkBinding = sink.signal.bind(to: binder, on: .immediate)
    let variableBinding = variable.signal.bind(to: binder, on: .immediate)
    #expect(sinkBinding.isDisposed && variableBinding.isDisposed)
    #expect(sink.core.observerCount == 0 && variable.core.observerCount == 0)
  }
}
