import Dispatch
import Foundation
import Testing

@testable import FluxReactive

/// Many threads on a few sinks and variables whose observers send on, always downstream: the
/// delivery locks are taken in one order, so there is no deadlock to report and every value
/// arrives. Run under the thread sanitizer too.
@Suite("Contended deliveries")
struct DeliveryContentionTests {
  @Test(
    "inv3: threads that send into sinks whose observers send downstream and set variables never deadlock, and lose nothing"
  )
  func inv3_contendedDownstreamDeliveriesNeverReportADeadlock() {
    let top = Sink<Int>()
    let middle = Sink<Int>()
    let bottom = Sink<Int>()
    let last = Variable(0)
    let text = Variable("")
    let received = [Counter(), Counter(), Counter()]
    let keep = [
      top.signal.observe { value in
        received[0].increment()
        if value % 13 == 0 { yieldThread() }  // hands the delivery over while others wait for it
        middle.send(value: value)
      },
      top.signal.observe { value in
        if value % 3 == 0 { last.value = value }
      },
      middle.signal.observe { value in
        received[1].increment()
        if value % 17 == 0 { yieldThread() }
        bottom.send(value: value)
      },
      middle.signal.observe { value in
        if value % 5 == 0 { last.modify { $0 &+= 1 } }
      },
      bottom.signal.observe { value in
        received[2].increment()
        if value % 7 == 0 { text.value = String(value) }
        if value % 11 == 0 { _ = last.value }
      },
      last.signal.observe { _ in _ = text.value },
      text.signal.observe { _ in _ = last.value },
    ]
    let threads = 6
    let iterations = 10_000
    let sentTo = [Counter(), Counter(), Counter()]
    let finished = finishOnThreads(threads, within: 120) { thread in
      var random = SplitMix64(seed: UInt64(thread))
      for value in 0..<iterations {
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
          top.send(value: value)
          sentTo[0].increment()
        case 1:
          middle.send(value: value)
          sentTo[1].increment()
        default:
          bottom.send(value: value)
          sentTo[2].increment()
        }
        if random.chance(1, in: 64) { yieldThread() }
      }
    }
    #expect(finished, "the senders deadlocked")
    guard finished else {
      _ = Unmanaged.passRetained(Box((top, middle, bottom, last, text, keep)))
      return
    }
    let sent = sentTo.map(\.value)
    #expect(sent.reduce(0, +) == threads * iterations)
    #expect(received[0].value == sent[0])
    #expect(received[1].value == sent[0] + sent[1])
    #expect(received[2].value == sent[0] + sent[1] + sent[2])
    for observer in keep { observer.dispose() }  // they keep each other's variables
  }

  #if os(Linux)
    @Test(
      "inv3: senders that outnumber the cores take turns on one sink without a convoy: most sends put no thread to sleep"
    )
    func inv3_sendersThatOutnumberTheCoresDoNotConvoy() {
      // The observer sometimes lets other threads run during its delivery, so that senders go
      // to sleep waiting for the delivery lock. A lock handed from sleeper to sleeper would make
      // nearly every send wait for a sleeping thread to be scheduled: a context switch per send.
      // Fewer than one in two leaves room for a machine busy with other tests, whose holders are
      // preempted more often (each preemption puts the waiting senders to sleep once).
      let sink = Sink<Int>()
      let delivered = Counter()
      let keep = sink.signal.observe { value in
        delivered.increment()
        if value % 100 == 0 { yieldThread() }
      }
      let threads = 8
      let iterations = 2_000
      let sleeps = LockedValue(0)
      runOnThreads(threads) { _ in
        let before = voluntaryContextSwitches()
        for value in 0..<iterations { sink.send(value: value) }
        let slept = voluntaryContextSwitches() - before
        sleeps.withLock { $0 += slept }
      }
      #expect(delivered.value == threads * iterations)
      #expect(
        sleeps.current < threads * iterations / 2,
        "\(sleeps.current) sleeps in \(threads * iterations) sends: the delivery lock is handed from sleeper to sleeper"
      )
      withExtendedLifetime(keep) {}
    }
  #endif
}
