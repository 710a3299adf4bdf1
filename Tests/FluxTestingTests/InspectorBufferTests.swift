import Testing

@testable import FluxDevtools

@Suite("Inspector connection: the buffer and the machine")
struct InspectorBufferTests {
  @Test("the buffer keeps lines not sent, drops new ones when they fill it, and says so as one gap")
  func dropsWhenFull() {
    var buffer = LineBuffer(maxLines: 3, maxBytes: 1 << 20)
    buffer.isConnected = true
    for index in 0..<6 { #expect(buffer.append("{\"a\":\(index)}\n") == index) }
    #expect(buffer.dropped == 3)
    let sent = buffer.take(byteLimit: 1 << 20)
    #expect(
      sent == [
        .line(n: 0, text: "{\"a\":0}\n"), .line(n: 1, text: "{\"a\":1}\n"), .line(n: 2, text: "{\"a\":2}\n"),
        .gap(from: 3, count: 3, reason: .buffer),
      ])
    #expect(!buffer.hasWork)
  }

  @Test("lines sent make room for new ones, oldest first; a reconnect without them gets a gap")
  func sentLinesGoFirst() {
    var buffer = LineBuffer(maxLines: 2, maxBytes: 1 << 20)
    buffer.isConnected = true
    _ = buffer.append("0\n")
    _ = buffer.append("1\n")
    #expect(buffer.take(byteLimit: 1 << 20).count == 2)
    _ = buffer.append("2\n")
    _ = buffer.append("3\n")
    #expect(buffer.dropped == 0)
    #expect(buffer.first == 2)
    buffer.rewind(to: 1)
    #expect(
      buffer.take(byteLimit: 1 << 20) == [
        .gap(from: 1, count: 1, reason: .disconnected), .line(n: 2, text: "2\n"), .line(n: 3, text: "3\n"),
      ])
    buffer.rewind(to: 99)
    #expect(buffer.take(byteLimit: 1 << 20).isEmpty)
  }

  @Test("lines written while paused are held, then sent as one gap on resume; they do not block new lines")
  func paused() {
    var buffer = LineBuffer(maxLines: 4, maxBytes: 1 << 20)
    buffer.isConnected = true
    _ = buffer.append("0\n")
    #expect(buffer.take(byteLimit: 1 << 20).count == 1)
    buffer.setPaused(true)
    for index in 1...6 { _ = buffer.append("\(index)\n") }
    #expect(buffer.dropped == 0)
    #expect(!buffer.hasWork)
    #expect(buffer.take(byteLimit: 1 << 20).isEmpty)
    #expect(buffer.setPaused(false) == 6)
    _ = buffer.append("7\n")
    #expect(buffer.take(byteLimit: 1 << 20) == [.gap(from: 1, count: 6, reason: .paused), .line(n: 7, text: "7\n")])
  }

  @Test("a line longer than the buffer's bytes is counted, never kept; bytes bound the buffer as lines do")
  func bytes() {
    var buffer = LineBuffer(maxLines: 100, maxBytes: 10)
    buffer.isConnected = false
    _ = buffer.append(String(repeating: "x", count: 11))
    _ = buffer.append("12345\n")
    _ = buffer.append("12345\n")
    #expect(buffer.dropped == 2)
    #expect(
      buffer.take(byteLimit: 1) == [.gap(from: 0, count: 1, reason: .buffer)])
    #expect(buffer.take(byteLimit: 1) == [.line(n: 1, text: "12345\n")])
    #expect(buffer.take(byteLimit: 1) == [.gap(from: 2, count: 1, reason: .disconnected)])
  }

  @Test("gaps stay bounded in number whatever the drops")
  func boundedGaps() {
    var buffer = LineBuffer(maxLines: 1, maxBytes: 1 << 20)
    _ = buffer.append("kept\n")
    for index in 0..<10_000 {
      buffer.isConnected = index % 2 == 0
      _ = buffer.append("dropped\n")
    }
    #expect(buffer.dropped == 10_000)
    buffer.isConnected = true
    var messages: [Outgoing] = []
    while buffer.hasWork { messages += buffer.take(byteLimit: 1 << 20) }
    #expect(messages.count <= 1 + 1 + 16 + 1)
    let counted = messages.reduce(0) { total, message in
      if case .gap(_, let count, _) = message { return total + count }
      return total + 1
    }
    #expect(counted == 10_001)
  }

  @Test(
    "the backoff doubles from its first step to its longest, less up to half at random; a welcome resets it once its connection lasted"
  )
  func backoff() {
    var machine = ConnectionMachine(initialBackoff: 0.1, maximumBackoff: 5)
    var delays: [Double] = []
    for _ in 0..<10 {
      delays.append(machine.ended(random: 0, at: 0))
      machine.backoffElapsed()
    }
    #expect(delays.map { ($0 * 1000).rounded() / 1000 } == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5, 5, 5])
    #expect(machine.ended(random: 1, at: 0) == 2.5)
    machine.backoffElapsed()
    machine.opened()
    machine.welcomed(at: 1_000_000_000)
    #expect(machine.phase == .connected)
    #expect(machine.ended(random: 0, at: 6_000_000_000) == 0.1)
    machine.close()
    #expect(machine.phase == .closed)
    machine.backoffElapsed()
    #expect(machine.phase == .closed)
  }

  @Test("an inspector that welcomes and hangs up at once: the backoff keeps growing, as for one that refuses")
  func welcomeAndHangUp() {
    var machine = ConnectionMachine(initialBackoff: 0.1, maximumBackoff: 5)
    var delays: [Double] = []
    var now: UInt64 = 1_000_000_000
    for _ in 0..<8 {
      machine.opened()
      machine.welcomed(at: now)
      now += 10_000_000  // 10 ms of a connection
      delays.append(machine.ended(random: 0, at: now))
      machine.backoffElapsed()
    }
    #expect(delays.map { ($0 * 1000).rounded() / 1000 } == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5])
    // A connection that lasted the longest backoff starts the backoff again from its first step.
    machine.opened()
    machine.welcomed(at: now)
    now += 5_000_000_000
    #expect(machine.ended(random: 0, at: now) == 0.1)
  }

  @Test("which messages the machine takes in which phase")
  func verdicts() {
    var machine = ConnectionMachine(initialBackoff: 0.1, maximumBackoff: 5)
    machine.opened()
    #expect(machine.verdict(on: "welcome") == .handle)
    #expect(machine.verdict(on: "refused") == .handle)
    #expect(machine.verdict(on: "command") == .wrong("a command came before the welcome"))
    #expect(machine.verdict(on: "x-anything") == .ignore)
    machine.welcomed(at: 0)
    #expect(machine.verdict(on: "command") == .handle)
    #expect(machine.verdict(on: "ping") == .handle)
    #expect(machine.verdict(on: "pong") == .ignore)
    #expect(machine.verdict(on: "welcome") == .wrong("a second welcome"))
    #expect(machine.verdict(on: "hello") == .wrong("a message of an unknown type: hello"))
  }

  @Test("FLUX_INSPECTOR reads HOST:PORT and [IPv6]:PORT, and nothing else")
  func addresses() {
    #expect(InspectorEnvironment.address("127.0.0.1:9400")! == ("127.0.0.1", 9400))
    #expect(InspectorEnvironment.address(" mac.local:1 ")! == ("mac.local", 1))
    #expect(InspectorEnvironment.address("[fe80::1]:65535")! == ("fe80::1", 65535))
    for wrong in [
      "", ":9400", "host", "host:", "host:0", "host:65536", "host:+1", "host:99999999999999999999",
      "fe80::1:9400", "[fe80::1]9400", "a b:1", "host:٣",
    ] {
      #expect(InspectorEnvironment.address(wrong) == nil, "\(wrong)")
    }
  }

  @Test("JSON read by the connection: strings with escapes, whole numbers in range, keys once")
  func json() throws {
    let fields = try JSONFields(
      Array(#"{"a":"x\"\u00e9\ud83d\ude00\n","n":9007199254740991,"m":9007199254740992}"#.utf8)[...])
    #expect(fields.string("a") == "x\"é😀\n")
    #expect(fields.wholeNumber("n") == 9_007_199_254_740_991)
    #expect(fields.wholeNumber("m") == nil)
    #expect(throws: JSONFieldsError.self) { try JSONFields(Array(#"{"a":1,"a":2}"#.utf8)[...]) }
    #expect(try JSONFields(Array(#"{"a":"\ud800"}"#.utf8)[...]).string("a") == nil)
    #expect(JSONText.string("a\"b\\c\u{1}\n") == #""a\"b\\c\u0001\n""#)
  }
}
