import FluxCore
import Foundation
import Testing

@testable import FluxReactive

@Suite("Memory")
struct MemoryTests {
  @Test("inv8: dropping the last reference to a sink frees it and its observers")
  func inv8_sinkFreedWithObservers() {
    let flag = DeallocFlag()
    weak var weakSink: Sink<Int>?
    var signal: Signal<String>?
    do {
      let sink = Sink<Int>()
      weakSink = sink
      signal = sink.signal.map { "\($0)" }
      signal?.observe { [tracked = Tracked(flag)] _ in _ = tracked }
      sink.send(value: 1)
    }
    #expect(weakSink == nil)
    #expect(flag.isFreed)
    #expect(signal?.observe { _ in }.isDisposed == true)
  }

  @Test("inv8: dropping the last reference to a variable frees it and its observers")
  func inv8_variableFreedWithObservers() {
    let flag = DeallocFlag()
    weak var weakVariable: Variable<Int>?
    do {
      let variable = Variable(0)
      weakVariable = variable
      variable.signal.observe(on: .immediate).observe { [tracked = Tracked(flag)] _ in _ = tracked }
    }
    #expect(weakVariable == nil)
    #expect(flag.isFreed)
  }

  @Test("inv8: an observer that captures its own disposable forms no cycle")
  func inv8_observerCapturingItsDisposable() {
    let flag = DeallocFlag()
    weak var weakSink: Sink<Int>?
    do {
      let sink = Sink<Int>()
      weakSink = sink
      let holder = Box<(any Disposable)?>(nil)
      holder.value = sink.signal.observe { [tracked = Tracked(flag)] _ in
        _ = tracked
        _ = holder.value
      }
    }
    #expect(weakSink == nil)
    #expect(flag.isFreed)
  }

  @Test("inv8: a scope is freed with what it holds")
  func inv8_scopeFreed() {
    let flag = DeallocFlag()
    let sink = Sink<Int>()
    weak var weakScope: DisposableScope?
    do {
      let scope = DisposableScope()
      weakScope = scope
      scope += sink.signal.observe { [tracked = Tracked(flag)] _ in _ = tracked }
    }
    #expect(weakScope == nil)
    #expect(flag.isFreed)
    #expect(sink.core.observerCount == 0)
  }
}

@Suite("Memory of rescheduled observations")
struct ScheduledMemoryTests {
  @Test("inv8: an observe(on:) observer goes with its sink, even while its disposable is kept")
  func inv8_observeOnObserverFreedWithSink() {
    let flag = DeallocFlag()
    var kept: (any Disposable)?
    do {
      let sink = Sink<Int>()
      kept = sink.signal.observe(on: .immediate).observe { [tracked = Tracked(flag)] _ in _ = tracked }
      sink.send(value: 1)
    }
    #expect(flag.isFreed)
    kept?.dispose()
  }
}

extension MemoryTests {
  @Test("inv8: a variable freed inside its own delivery frees its observers when that delivery ends")
  func inv8_variableFreedInsideItsDeliveryFreesItsObservers() {
    let flag = DeallocFlag()
    let holder = LockedValue<Variable<Int>?>(Variable(0))
    let signal = holder.current!.signal
    let kept = signal.observe { [tracked = Tracked(flag)] _ in _ = tracked }
    // Its replay is a delivery; the variable's last reference goes inside it.
    let dropper = signal.observe { _ in _ = holder.takeValue() }
    #expect(holder.current == nil)
    #expect(flag.isFreed, "the freed variable's observers outlived it, held by its signal")
    #expect(kept.isDisposed)
    withExtendedLifetime((signal, kept, dropper)) {}
  }
}

extension ScheduledMemoryTests {
  @Test("inv8: an observer on an executor goes with its sink once no value waits, even while its disposable is kept")
  func inv8_observerOnAnExecutorFreedWithSink() {
    let flag = DeallocFlag()
    let manual = ManualExecutor()
    var kept: (any Disposable)?
    do {
      let sink = Sink<Int>()
      kept = sink.signal.observe(on: manual.executor).observe { [tracked = Tracked(flag)] _ in _ = tracked }
      sink.send(value: 1)
    }
    #expect(!flag.isFreed, "a value still waits for the observer")
    manual.drain()
    #expect(flag.isFreed, "the kept disposable kept the observer of a freed sink")
    kept?.dispose()
  }
}
