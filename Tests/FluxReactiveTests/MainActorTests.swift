import Dispatch
import FluxCore
import FluxReactive
import Foundation
import Testing

/// A view model, as an app has them: main-actor state that follows a signal.
@MainActor final class CountModel {
  var text = ""
  var seen: [Int] = []
  var threadsOffMain = 0
  let scope = DisposableScope()

  func follow(_ signal: Signal<Int>) {
    scope += signal.observe(on: .mainActor) { [weak self] count in
      // Checked by queue, not by thread: on Linux a worker thread may drain the main queue.
      if !MainActorTests.isOnMainQueue { self?.threadsOffMain += 1 }
      self?.text = "count: \(count)"
      self?.seen.append(count)
    }
  }
}

@Suite("Observing on the main actor")
struct MainActorTests {
  static let mainKey: DispatchSpecificKey<Int> = {
    let key = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
  }()

  static var isOnMainQueue: Bool { DispatchQueue.getSpecific(key: mainKey) == 1 }

  @MainActor
  @Test("a main-actor observer runs on the main actor only, in order, for values sent from any thread")
  func mainActorObserverRunsOnMain() async {
    _ = Self.mainKey
    let model = CountModel()
    let count = Variable(0)
    model.follow(count.signal)
    await Task.detached {
      for value in 1...100 { count.value = value }
    }.value
    #expect(await eventuallyOnMainActor { model.text == "count: 100" })
    #expect(model.seen == Array(0...100), "every value, in order")
    #expect(model.threadsOffMain == 0)
  }

  @MainActor
  @Test("a main-actor observer is not called once its observation is disposed")
  func mainActorObserverStopsWhenDisposed() async {
    let model = CountModel()
    let sink = Sink<Int>()
    model.follow(sink.signal)
    sink.send(value: 1)
    #expect(await eventuallyOnMainActor { model.text == "count: 1" })
    model.scope.dispose()
    sink.send(value: 2)
    await Task.detached { sink.send(value: 3) }.value
    try? await Task.sleep(nanoseconds: 20_000_000)
    #expect(model.text == "count: 1")
  }

  @Test("a binding delivered off the main queue stops with a message")
  func bindingOffMainStopsWithMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      @MainActor final class Label {
        var text: String?
      }
      let sink = Sink<String>()
      await MainActor.run {
        let label = Label()
        sink.signal.bind(to: label, \.text, on: .immediate)
        withExtendedLifetime(label) {
          let done = DispatchSemaphore(value: 0)
          Thread {
            sink.send(value: "off main")  // .immediate delivers on this thread: refused
            done.signal()
          }.start()
          done.wait()
        }
      }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Flux: a binding was delivered off the main queue"), "\(message)")
  }
}
