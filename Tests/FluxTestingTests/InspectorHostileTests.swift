import FluxCore
import Foundation
import Synchronization
import Testing

@testable import FluxDevtools

#if canImport(Glibc)
  import Glibc
#endif

/// Whether the tests run under the thread sanitizer, which does not follow a forked child.
private let threadSanitizerIsOn = dlsym(nil, "__tsan_init") != nil

/// The file descriptors the process has open now.
private func openDescriptors() -> Int {
  (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
}

@Suite("Inspector connection: a hostile inspector, and an app that misuses its connection", .serialized)
struct InspectorHostileTests {
  @Test(
    "a connection to a port that is not one is closed at once and holds no file descriptor",
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
  func notAPortHoldsNoDescriptor() {
    let before = openDescriptors()
    for port in [0, -1, 65536, Int.max, Int.min] {
      for _ in 0..<100 {
        let connection = InspectorConnection(host: "127.0.0.1", port: port, options: fastOptions())
        #expect(connection.phase == .closed)
        #expect(!connection.send(waitingAtMost: 0))
        connection.close()
      }
    }
    // 500 connections: each would have kept the two ends of its pipe. Other suites may open a few
    // descriptors meanwhile.
    let after = openDescriptors()
    #expect(after < before + 100, "\(after - before) descriptors more than before")
  }

  @Test("the buffer's work and what it takes agree, whatever the order of lines, pauses, drops and reconnects")
  func bufferModel() {
    var generator = SystemRandomNumberGenerator()
    for round in 0..<300 {
      var buffer = LineBuffer(maxLines: Int.random(in: 1...6, using: &generator), maxBytes: 1 << 20)
      var delivered = 0  // the n from which the inspector expects the next message
      for step in 0..<200 {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0...3: _ = buffer.append("{\"n\":\(step)}\n")
        case 4: buffer.setPaused(!buffer.isPaused)
        case 5: buffer.isConnected.toggle()
        case 6:
          let have = Int.random(in: 0...buffer.next, using: &generator)
          buffer.rewind(to: have)
          delivered = buffer.sendNext
        default:
          var copy = buffer
          let hasWork = buffer.hasWork
          let taken = copy.take(byteLimit: Int.random(in: 1...64, using: &generator))
          #expect(hasWork == !taken.isEmpty, "round \(round), step \(step): hasWork \(hasWork), took \(taken)")
          buffer = copy
          for outgoing in taken {
            switch outgoing {
            case .line(let n, _):
              #expect(n == delivered, "round \(round), step \(step): line \(n), expected \(delivered)")
              delivered = n + 1
            case .gap(let from, let count, _):
              #expect(from == delivered && count > 0, "round \(round), step \(step): gap \(from)+\(count)")
              delivered = from + count
            }
          }
          #expect(delivered == buffer.sendNext)
        }
      }
    }
  }

  @Test(
    "commands in a tight loop while three threads commit: each is answered once, and the present keeps every action")
  func commandStorm() throws {
    for iteration in 0..<3 {
      var options = fastOptions()
      options.bufferLines = 50_000
      // A bound for a test that would hang under the thread sanitizer on a loaded machine.
      options.commitTimeout = 120
      let inspector = try FakeInspector()
      let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: options)
      let queue = DispatchQueue(label: "storm \(iteration)")
      let store = loggedCounter(connection, executor: .queue(queue))
      let other = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate,
        middlewares: [connection.log.middleware(label: "other", snapshots: .snapshot)])
      connection.offer(other, label: "other")
      #expect(inspector.waitUntil { connection.phase == .connected })
      let group = DispatchGroup()
      for thread in 0..<3 {
        DispatchQueue.global().async(group: group) {
          for _ in 0..<300 {
            if thread == 2 { other.actions.dispatch(action: .add(1)) }
            store.actions.dispatch(action: .add(1))
          }
        }
      }
      var ids: [Int] = []
      for step in 0..<300 {
        let n = Int.random(in: 0...max(0, connection.statistics.linesWritten))
        let fields: String
        switch step % 11 {
        case 0: fields = "\"store\":\"counter\",\"command\":\"jump\",\"to\":\(n)"
        case 1, 2: fields = "\"store\":\"counter\",\"command\":\"skip\",\"at\":\(n)"
        case 3: fields = "\"store\":\"counter\",\"command\":\"unskip\",\"at\":\(n)"
        case 4: fields = "\"store\":\"counter\",\"command\":\"dispatch\",\"action\":{\"add\":{\"_0\":0}}"
        case 5: fields = "\"store\":\"counter\",\"command\":\"dispatch\",\"action\":{\"add\":{\"_0\":\"x\"}}"
        case 6: fields = "\"command\":\"pause\""
        case 7: fields = "\"command\":\"resume\""
        case 8: fields = "\"store\":\"counter\",\"command\":\"present\""
        case 9: fields = "\"store\":\"other\",\"command\":\"jump\",\"to\":\(n)"
        default: fields = "\"store\":\"gone\",\"command\":\"skip\",\"at\":\(n)"
        }
        ids.append(inspector.command(fields))
      }
      var skipped: Set<Int> = []
      for id in ids {
        let ack = inspector.ack(id, timeout: 240)
        #expect(ack != nil, "no ack for command \(id)")
        if ack?["ok"] as? Bool == true, let outcome = ack?["outcome"] as? String {
          if outcome.hasPrefix("skipped #"), let at = Int(outcome.dropFirst(9).prefix { $0.isNumber }) {
            skipped.insert(at)
          } else if outcome.hasPrefix("unskipped #"), let at = Int(outcome.dropFirst(11).prefix { $0.isNumber }) {
            skipped.remove(at)
          }
        }
      }
      #expect(Set(inspector.messages(ofType: "ack").compactMap { $0["id"] as? Int }).count == ids.count)
      #expect(inspector.messages(ofType: "ack").count == ids.count, "a command was answered twice")
      group.wait()
      queue.sync {}
      var last: [Int] = []
      for at in skipped.sorted() {
        last.append(inspector.command("\"store\":\"counter\",\"command\":\"unskip\",\"at\":\(at)"))
      }
      last.append(inspector.command("\"command\":\"resume\""))
      last.append(inspector.command("\"store\":\"counter\",\"command\":\"present\""))
      for id in last {
        let ack = inspector.ack(id, timeout: 240)
        #expect(ack?["ok"] as? Bool == true, "\(ack ?? [:])")
      }
      queue.sync {}
      #expect(store.computed.count.value == 900)
      #expect(other.computed.count.value == 300)
      connection.close()
      inspector.kill()
    }
  }

  @Test("a dispatched action that is not an object is answered about the action, never about a line")
  func dispatchOfNoObject() throws {
    let inspector = try FakeInspector()
    let connection = InspectorConnection(host: "127.0.0.1", port: inspector.port, options: fastOptions())
    defer { connection.close() }
    let store = loggedCounter(connection)
    #expect(inspector.waitUntil { connection.phase == .connected })
    for action in [
      "[[1]]", "5", "\"add\"", "null", "[" + String(repeating: "[", count: 400) + String(repeating: "]", count: 401),
    ] {
      let id = inspector.command("\"store\":\"counter\",\"command\":\"dispatch\",\"action\":\(action)")
      let error = inspector.ack(id)?["error"] as? String ?? ""
      #expect(error.hasPrefix("the action is not a CounterAction (the action "), "\(action): \(error)")
      #expect(!error.contains("line"), "\(action): \(error)")
    }
    #expect(store.computed.count.value == 0)
  }

  #if os(Linux)
    @Test(
      "a child forked while other threads use the connection sees it closed, and reads it without waiting",
      .disabled(if: threadSanitizerIsOn))
    func forkedChild() async {
      await #expect(processExitsWith: .success) {
        var options = InspectorConnection.Options()
        options.report = { _ in }
        // Nothing listens there: the connection's thread connects and backs off, again and again.
        let connection = InspectorConnection(host: "127.0.0.1", port: 9, options: options)
        let store = loggedCounter(connection)
        let stop = Atomic<Bool>(false)
        let users = (0..<3).map { index in
          Thread {
            while !stop.load(ordering: .relaxed) {
              if index == 0 { store.actions.dispatch(action: .add(1)) } else { _ = connection.statistics }
            }
          }
        }
        for thread in users { thread.start() }
        usleep(50_000)
        for _ in 0..<100 {
          let child = fork()
          if child == 0 {
            // The child has none of the parent's threads: the connection is the parent's, not its own.
            guard connection.phase == .closed else { _exit(2) }
            _ = connection.statistics
            connection.close()
            _exit(0)
          }
          var status: Int32 = 0
          var ended = false
          for _ in 0..<200 where !ended {
            if waitpid(child, &status, WNOHANG) == child { ended = true } else { usleep(10_000) }
          }
          guard ended else {
            kill(child, SIGKILL)
            exit(4)  // the child hung
          }
          guard (status & 0x7f) == 0, (status >> 8) & 0xff == 0 else { exit(3) }
        }
        stop.store(true, ordering: .relaxed)
        exit(0)
      }
    }
  #endif
}
