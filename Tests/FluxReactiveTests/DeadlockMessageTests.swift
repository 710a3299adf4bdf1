import Dispatch
import Foundation
import Testing

@testable import FluxReactive

/// Rule 3's one deadlock: observers on two threads that send into each other's sinks, each while
/// its own delivery runs. Where the delivery lock knows its holder (Linux), it is found and named;
/// elsewhere the two threads wait for each other, as the threading article says.
@Suite("Rule 3: the deadlock of observers that send into each other's sinks")
struct DeadlockMessageTests {
  #if os(Linux) && !FLUX_PORTABLE
    @Test("inv3: observers on two threads that send into each other's sinks stop with a message naming the deadlock")
    func inv3_crossedSendsStopWithAMessageThatNamesTheDeadlock() async {
      let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        let first = Sink<Int>()
        let second = Sink<Int>()
        let bothDelivering = DispatchGroup()
        bothDelivering.enter()
        bothDelivering.enter()
        let keep = [
          first.signal.observe { value in
            guard value == 1 else { return }
            bothDelivering.leave()
            bothDelivering.wait()
            second.send(value: 2)
          },
          second.signal.observe { value in
            guard value == 1 else { return }
            bothDelivering.leave()
            bothDelivering.wait()
            first.send(value: 2)
          },
        ]
        Thread { first.send(value: 1) }.start()
        Thread { second.send(value: 1) }.start()
        sleep(30)
        withExtendedLifetime(keep) {}
      }
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(message.contains("Flux: deadlock:"), "\(message)")
      #expect(!message.contains("Recursive call to lock Mutex"), "\(message)")
    }

    @Test("inv3: observers on three threads that send around a ring of sinks stop with a message naming the deadlock")
    func inv3_ringOfThreeSendsStopsWithAMessageThatNamesTheDeadlock() async {
      let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        let sinks = [Sink<Int>(), Sink<Int>(), Sink<Int>()]
        let allDelivering = DispatchGroup()
        for _ in sinks { allDelivering.enter() }
        let keep = sinks.indices.map { index in
          sinks[index].signal.observe { value in
            guard value == 1 else { return }
            allDelivering.leave()
            allDelivering.wait()
            sinks[(index + 1) % sinks.count].send(value: 2)
          }
        }
        for sink in sinks { Thread { sink.send(value: 1) }.start() }
        sleep(30)
        withExtendedLifetime(keep) {}
      }
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(message.contains("Flux: deadlock:"), "\(message)")
      #expect(message.contains("2 other threads"), "\(message)")
      #expect(!message.contains("Recursive call to lock Mutex"), "\(message)")
    }

    @Test("inv3: modify bodies on two threads that set each other's variables stop with a message naming the deadlock")
    func inv3_crossedModifyBodiesStopWithAMessageThatNamesTheDeadlock() async {
      let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        let first = Variable("a")
        let second = Variable("b")
        let bothInside = DispatchGroup()
        bothInside.enter()
        bothInside.enter()
        Thread {
          first.modify { _ in
            bothInside.leave()
            bothInside.wait()
            second.value = "from the first"
          }
        }.start()
        Thread {
          second.modify { _ in
            bothInside.leave()
            bothInside.wait()
            first.value = "from the second"
          }
        }.start()
        sleep(30)
      }
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(message.contains("Flux: deadlock:"), "\(message)")
    }
  #endif

  @Test("inv3: sends from two threads into each other's sinks outside a delivery never deadlock")
  func inv3_crossedSendsOutsideADeliveryDoNotDeadlock() {
    let first = Sink<Int>()
    let second = Sink<Int>()
    let received = Counter()
    let keep = [
      first.signal.observe { _ in received.increment() },
      second.signal.observe { _ in received.increment() },
    ]
    let finished = finishOnThreads(2, within: 30) { thread in
      for value in 0..<10_000 {
        if thread == 0 {
          first.send(value: value)
          second.send(value: value)
        } else {
          second.send(value: value)
          first.send(value: value)
        }
      }
    }
    #expect(finished)
    #expect(received.value == 40_000)
    withExtendedLifetime(keep) {}
  }
}
