import Dispatch
import Foundation
import Testing

@testable import FluxReactive

/// Loops over `values` of every kind of signal, ended by `cancel()` or by their source going
/// while other threads send: each loop ends, nothing deadlocks, and the observation goes.
@Suite("values: cancellation and ends under concurrent sends", .serialized)
struct ValuesCancellationTests {
  /// The kinds of signal a loop can read: each takes `values` a different way.
  enum Kind: String, CaseIterable, Sendable {
    case sink, variable, map, observeOnQueue, skipRepeats, producer
  }

  /// A sink, and the signal of `kind` made from it.
  private static func signal(_ kind: Kind, of sink: Sink<Int>, variable: Variable<Int>) -> Signal<Int> {
    switch kind {
    case .sink: sink.signal
    case .variable: variable.signal
    case .map: variable.signal.map { $0 + 1 }
    case .observeOnQueue: sink.signal.observe(on: .queue(.global()))
    case .skipRepeats: variable.signal.skipRepeats()
    case .producer:
      // Captures the sink's signal, not the sink, so freeing the sink ends the producer too.
      { upstream in Signal<Int> { observer in upstream.observe { observer($0) } } }(sink.signal)
    }
  }

  @Test("inv6: cancelling a loop while two threads send ends it and disposes the observation", arguments: Kind.allCases)
  func inv6_cancelWhileSending(kind: Kind) async {
    for iteration in 0..<60 {
      let sink = Sink<Int>()
      let variable = Variable(0)
      let values = Self.signal(kind, of: sink, variable: variable).values
      let task = Task { for await _ in values {} }
      let senders = LockedValue(0)
      let cancelled = LockedValue(false)
      for thread in 0..<2 {
        Thread {
          for value in 0..<300 {
            sink.send(value: value)
            variable.value = thread * 1_000 + value
          }
          senders.withLock { $0 += 1 }
        }.start()
      }
      Thread {
        usleep(UInt32(iteration % 30) * 10)
        task.cancel()
        cancelled.withLock { $0 = true }
      }.start()
      let ended = await eventuallyWithin(seconds: 10) { cancelled.current && senders.current == 2 }
      #expect(ended, "task.cancel() and the senders deadlocked (\(kind), iteration \(iteration))")
      guard ended else {
        _ = Unmanaged.passRetained(Box((sink, variable, task)))  // the stuck threads hold their locks
        return
      }
      await task.value
      let disposed = await eventuallyWithin(seconds: 10) {
        sink.core.observerCount == 0 && variable.core.observerCount == 0
      }
      #expect(disposed, "the observation outlived the cancelled loop (\(kind), iteration \(iteration))")
      if !disposed { return }
    }
  }

  @Test("a loop ends when its sink or variable is freed while another thread sends", arguments: Kind.allCases)
  func loopEndsWhenSourceIsFreedDuringSends(kind: Kind) async {
    for iteration in 0..<60 {
      let held = LockedValue<(sink: Sink<Int>, variable: Variable<Int>)?>((Sink<Int>(), Variable(0)))
      let values = held.withLock { Self.signal(kind, of: $0!.sink, variable: $0!.variable) }.values
      let task = Task { for await _ in values {} }
      Thread {
        let source = held.current
        for value in 0..<30 {
          source?.sink.send(value: value)
          source?.variable.value = value
        }
      }.start()
      Thread {
        usleep(UInt32(iteration % 20))
        held.withLock { $0 = nil }
      }.start()
      let ended = LockedValue(false)
      Task {
        await task.value
        ended.withLock { $0 = true }
      }
      let finished = await eventuallyWithin(seconds: 10) { ended.current }
      #expect(finished, "the loop did not end after its sink was freed (\(kind), iteration \(iteration))")
      guard finished else {
        task.cancel()
        return
      }
    }
  }
}
