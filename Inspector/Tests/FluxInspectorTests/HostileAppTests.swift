import Foundation
import Testing

@testable import FluxInspector

/// Rule 21: every message from an app is hostile. The server runs in a process of its own here,
/// so that a trap is a failed test; after each attack, it still serves the page and other apps.
@Suite("Apps that send anything")
struct HostileAppTests {
  /// Each line, sent after a hello, and the words of the error the inspector answers before it
  /// closes the connection.
  static let badLines: [(line: String, words: String)] = [
    ("garbage", "not JSON"),
    ("[1,2,3]", "not an object"),
    (#"{"type":"line","n":0,"line":{"a":1}} trailing"#, "text after the end"),
    (#"{"type":"nonsense"}"#, "unknown type: nonsense"),
    (#"{"n":1}"#, "has no \"type\""),
    (#"{"type":7}"#, "\"type\" is not a short text"),
    (#"{"type":"line","type":"gap"}"#, "the key \"type\" twice"),
    (#"{"type":"line","n":-1,"line":{}}"#, "a line needs"),
    (#"{"type":"line","n":9007199254740992,"line":{}}"#, "a line needs"),
    (#"{"type":"line","n":99999999999999999999999,"line":{}}"#, "a line needs"),
    (#"{"type":"line","n":1e2,"line":{}}"#, "a line needs"),
    (#"{"type":"gap","from":0,"count":0}"#, "a gap needs"),
    (#"{"type":"gap","from":9007199254740991,"count":9007199254740991}"#, "a gap needs"),
    (#"{"type":"ack","id":-3,"ok":true}"#, "an ack needs"),
    (#"{"type":"stores","stores":7}"#, "stores needs"),
    (#"{"type":"hello","protocol":1,"session":"x"}"#, "a hello that is not the first message"),
    (String(repeating: "[", count: 100_000), "not an object"),
    (
      #"{"type":"x","deep":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}",
      "more than 512 deep"
    ),
  ]

  @Test func inv21_noControlCharacterFromAnAppReachesTheServersOutput() async throws {
    let server = try await ServerProcess([])
    let app = try FakeApp(port: server.appsPort)
    #expect(await app.hello().contains("welcome"))
    app.send(#"{"type":"error","message":"\u001b]0;owned\u0007\u001b[2J\u009b31m\r\nforged line"}"#)
    #expect(await app.isClosed())
    let unknown = try FakeApp(port: server.appsPort)
    #expect(await unknown.hello().contains("welcome"))
    unknown.send(#"{"type":"\u001b[31mred"}"#)
    #expect(await unknown.isClosed())
    let said = server.errorOutput
    #expect(said.contains("forged line") && said.contains("red"), "\(said)")
    #expect(
      !said.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) }, "\(said)")
    #expect(!said.contains("\nforged line"), "\(said)")
  }

  @Test func inv21_aLineThatIsNotAMessageIsAnsweredWithAnErrorAndClosedAndTheServerGoesOn() async throws {
    let server = try await ServerProcess([])
    for (line, words) in Self.badLines {
      let app = try FakeApp(port: server.appsPort)
      #expect(await app.hello().contains("welcome"))
      app.send(line)
      let answer = object(await app.readLine() ?? "")
      let said = (answer["message"] ?? answer["reason"]) as? String ?? ""
      #expect(["error", "refused"].contains(answer["type"] as? String), "\(line.prefix(60)): \(answer)")
      #expect(said.contains(words), "\(line.prefix(60)): \(said)")
      #expect(await app.isClosed(), "\(line.prefix(60)) left the connection open")
      #expect(server.isRunning, "\(line.prefix(60)) stopped the server: \(server.ending)")
      guard server.isRunning else { return }
    }
    #expect(try await fetch("/live/sessions", port: server.port).status == 200)
  }

  @Test func inv21_aLineThatIsNotUTF8OrAFirstLineThatIsNotAHelloIsRefused() async throws {
    let server = try await ServerProcess([])
    let latin = try FakeApp(port: server.appsPort)
    latin.sendBytes(Array(#"{"type":"hello","app":""#.utf8) + [0xE9] + Array("\"}\n".utf8))
    #expect(await latin.readLine()?.contains("not UTF-8") == true)
    let first = try FakeApp(port: server.appsPort)
    first.send(#"{"type":"line","n":0,"line":{}}"#)
    #expect(await first.readLine() == #"{"type":"refused","reason":"the first message must be a hello, not line"}"#)
    #expect(await first.isClosed())
    let version = try FakeApp(port: server.appsPort)
    version.send(#"{"type":"hello","protocol":2,"session":"s"}"#)
    #expect(await version.readLine() == #"{"type":"refused","reason":"this inspector speaks protocol 1, not 2"}"#)
    #expect(server.isRunning)
  }

  @Test func aMessageOfAnotherTypeFromANewerAppThatStartsWithXIsIgnored() async throws {
    let server = try await ServerProcess([])
    let app = try FakeApp(port: server.appsPort)
    _ = await app.hello()
    app.send(#"{"type":"x-trace","what":[1,{"b":2}]}"#)
    app.send(#"{"type":"ping","extra":{"unknown":"fields are ignored"}}"#)
    #expect(await app.readLine() == #"{"type":"pong"}"#)
  }

  @Test func inv21_aLineLongerThan16MiBIsRefusedBeforeItEndsAnd10MBLineIsShown() async throws {
    let server = try await ServerProcess([])
    // Reading 10 MB takes seconds in a debug build under the thread sanitizer.
    let app = try FakeApp(port: server.appsPort, patience: 120)
    _ = await app.hello()
    // 10 MB of state in one line: within the limit, and shown.
    let big = String(repeating: "x", count: 10_000_000)
    app.line(0, extra: #""state":{"note":"\#(big)"},"#)
    app.send(#"{"type":"ping"}"#)
    #expect(await app.readLine() == #"{"type":"pong"}"#)
    let document = try await fetch("/live/session?session=1", port: server.port, patience: 120)
    #expect(document.body.utf8.count > 10_000_000)
    // 17 MiB with no line break: refused once the limit is passed, not at its end.
    let long = try FakeApp(port: server.appsPort)
    _ = await long.hello()
    long.sendBytes(Array(#"{"type":"line","n":0,"line":{"x":""#.utf8) + [UInt8](repeating: 0x61, count: 17 << 20))
    #expect(await long.readLine() == #"{"type":"error","message":"a message longer than 16 MiB"}"#)
    #expect(await long.isClosed())
    #expect(server.isRunning, "\(server.ending)")
    #expect(try await fetch("/", port: server.port).status == 200)
  }

  @Test func anAppThatSendsALineOfMegabytesDoesNotKeepAnotherFromBeingAnswered() async throws {
    let server = try await ServerProcess([])
    // Connections take the inspector's two event loops in turn: the first and the third share one.
    // Patient: under the thread sanitizer, beside other tests, an answer may take seconds.
    let other = try FakeApp(port: server.appsPort, session: "other", patience: 120)
    #expect(await other.hello().contains("welcome"))
    let second = try FakeApp(port: server.appsPort, session: "second")
    #expect(await second.hello().contains("welcome"))
    let big = try FakeApp(port: server.appsPort, session: "big", patience: 120)
    #expect(await big.hello().contains("welcome"))
    // 15 MiB of state in one line: checking it takes a while, seconds in a debug build.
    let before = server.bytesRead
    let sending = Task {
      try await blocking {
        let state = String(repeating: "x", count: 15 << 20)
        big.line(0, extra: #""state":{"note":"\#(state)"},"#)
      }
    }
    #expect(
      await eventually(120) {
        // The other app is not silent meanwhile (an app quiet for 15 s is taken for gone).
        other.send(#"{"type":"x-still-here"}"#)
        return server.bytesRead >= before + (15 << 20)
      })
    try await sending.value
    // Read whole: the other app, on the same event loop, is answered while the line is checked.
    other.send(#"{"type":"ping"}"#)
    let pong = await other.readLine()
    #expect(pong == #"{"type":"pong"}"#, "\(pong ?? "nothing")")
    let list = object(try await fetch("/live/sessions", port: server.port).body)
    let held = (list["sessions"] as? [[String: Any]])?.first { $0["session"] as? String == "big" }
    #expect(held?["lines"] as? Int == 0, "the line was checked before the other app was answered")
    // And the line is taken, once checked.
    big.send(#"{"type":"ping"}"#)
    #expect(await big.readLine() == #"{"type":"pong"}"#)
    let after = object(try await fetch("/live/sessions", port: server.port).body)
    #expect(
      (after["sessions"] as? [[String: Any]])?.first { $0["session"] as? String == "big" }?["lines"] as? Int == 1)
    #expect(server.isRunning, "\(server.ending)")
  }

  @Test func tenThousandLinesASecondAreAllKeptAndThePageIsAnsweredMeanwhile() async throws {
    let server = try await ServerProcess([])
    let app = try FakeApp(port: server.appsPort)
    _ = await app.hello()
    let flood = Task.detached {
      // 20,000 lines in two seconds, in bursts of 100 every 10 ms.
      for burst in 0..<200 {
        var text = ""
        for n in (burst * 100)..<(burst * 100 + 100) {
          text += #"{"type":"line","n":\#(n),"line":\#(Fixture.line(extra: #""sequence":\#(n + 1),"#))}"# + "\n"
        }
        app.sendBytes(Array(text.utf8))
        try? await Task.sleep(for: .milliseconds(10))
      }
    }
    // The page is answered while the lines come.
    for _ in 0..<5 {
      #expect(try await fetch("/", port: server.port, patience: 5).status == 200)
      try await Task.sleep(for: .milliseconds(200))
    }
    await flood.value
    #expect(
      try await eventually(60) {
        let list = object(try await fetch("/live/sessions", port: server.port).body)
        return (list["sessions"] as? [[String: Any]])?.first?["lines"] as? Int == 20_000
      })
    #expect(server.isRunning)
  }

  @Test func anAppThatSaysNothingFor15SecondsOrNoHelloFor10IsTakenForGone() async throws {
    let server = try await ServerProcess([])
    let quiet = try FakeApp(port: server.appsPort, patience: 40)
    _ = await quiet.hello()
    let silent = try FakeApp(port: server.appsPort, patience: 40)
    // No hello at all.
    let started = Date()
    #expect(await quiet.isClosed())
    #expect(await silent.readLine()?.contains("no hello within 10 s") == true)
    #expect(Date().timeIntervalSince(started) >= 9)
    let list = object(try await fetch("/live/sessions", port: server.port).body)
    #expect((list["sessions"] as? [[String: Any]])?.first?["live"] as? Bool == false)
  }

  @Test func aKilledAppLeavesItsSessionDisconnectedAndTheServerServing() async throws {
    let server = try await ServerProcess([])
    let app = try FakeApp(port: server.appsPort)
    _ = await app.hello()
    app.line(0)
    app.sendBytes(Array(#"{"type":"line","n":1,"line":{"store":"#.utf8))
    app.kill()
    #expect(
      try await eventually {
        let list = object(try await fetch("/live/sessions", port: server.port).body)
        let session = (list["sessions"] as? [[String: Any]])?.first
        return session?["live"] as? Bool == false && session?["lines"] as? Int == 1
      })
    #expect(server.isRunning)
  }
}

/// Apps on `--listen` present the pairing code the inspector printed; on loopback none is asked.
@Suite("Pairing")
struct PairingTests {
  @Test func anAppWithoutTheRightPairingCodeIsRefusedOnListen() async throws {
    let server = try await ServerProcess(["--listen", "127.0.0.1"])
    let code = try #require(server.pairingCode)
    #expect(code.wholeMatch(of: /[A-HJ-KMNP-Z2-9]{4}-[A-HJ-KMNP-Z2-9]{4}/) != nil, "\(code)")
    let none = try FakeApp(port: server.appsPort)
    #expect(await none.hello() == #"{"type":"refused","reason":"this inspector needs its pairing code"}"#)
    #expect(await none.isClosed())
    let wrong = try FakeApp(port: server.appsPort)
    #expect(await wrong.hello(pairing: "AAAA-AAAA") == #"{"type":"refused","reason":"the pairing code is wrong"}"#)
    let right = try FakeApp(port: server.appsPort)
    #expect(await right.hello(pairing: code.lowercased()).contains("welcome"))
    let list = object(try await fetch("/live/sessions", port: server.port).body)
    #expect((list["sessions"] as? [Any])?.count == 1)
    let said = server.errorOutput
    #expect(said.contains("refused an app at 127.0.0.1:"), "\(said)")
    #expect(said.contains("the pairing code is wrong"), "\(said)")
  }

  @Test func tenWrongCodesFromOneAddressRefuseTheRightOneForAMinute() async throws {
    let server = try await ServerProcess(["--listen", "127.0.0.1"])
    let code = try #require(server.pairingCode)
    for _ in 0..<LiveHub.wrongCodeLimit {
      let wrong = try FakeApp(port: server.appsPort)
      #expect(await wrong.hello(pairing: "BBBB-BBBB").contains("wrong"))
    }
    let right = try FakeApp(port: server.appsPort)
    #expect(await right.hello(pairing: code).contains("too many wrong pairing codes"))
  }

  @Test func wrongCodesFromManyAddressesRefuseTheRightOneForAMinute() async throws {
    let server = try await ServerProcess(["--listen", "127.0.0.1"])
    let code = try #require(server.pairingCode)
    // One wrong code from each of many addresses: none of them reaches its own limit.
    for index in 0..<LiveHub.allWrongCodesLimit {
      let wrong = try FakeApp(port: server.appsPort, from: "127.0.\(index / 200 + 1).\(index % 200 + 2)")
      #expect(await wrong.hello(pairing: "CCCC-CCCC").contains("the pairing code is wrong"))
    }
    let right = try FakeApp(port: server.appsPort, from: "127.0.9.9")
    #expect(
      await right.hello(pairing: code)
        == #"{"type":"refused","reason":"too many wrong pairing codes to this inspector: wait a minute"}"#)
  }

  @Test func inv21_connectionsThatSayNothingFromOneAddressKeepNoAppWithTheCodeOutOnListen() async throws {
    let server = try await ServerProcess(["--listen", "127.0.0.1"])
    let code = try #require(server.pairingCode)
    // A machine of the network, without the code, opens as many connections as apps may have and
    // says nothing on them (each would be closed after 10 s, and opened again).
    var silent: [FakeApp] = []
    for _ in 0..<LiveHub.connectionLimit {
      silent.append(try FakeApp(port: server.appsPort, from: "127.0.5.5"))
    }
    let more = try FakeApp(port: server.appsPort, from: "127.0.5.5")
    let refusal = object(await more.readLine() ?? "")
    #expect(refusal["type"] as? String == "refused", "\(refusal)")
    #expect((refusal["reason"] as? String)?.contains("not said hello") == true, "\(refusal)")
    let right = try FakeApp(port: server.appsPort, from: "127.0.6.6")
    #expect(await right.hello(pairing: code).contains("welcome"))
    withExtendedLifetime(silent) {}
  }

  @Test func onLoopbackNoCodeIsAskedAndNonePrinted() async throws {
    let server = try await ServerProcess([])
    #expect(server.pairingCode == nil)
    let app = try FakeApp(port: server.appsPort)
    #expect(await app.hello().contains("welcome"))
  }

  @Test func codesAreComparedWithoutCaseSpacesOrDashes() {
    #expect(LiveHub.same("abcd efgh", "ABCD-EFGH"))
    #expect(!LiveHub.same("ABCD-EFGX", "ABCD-EFGH"))
    #expect(!LiveHub.same("ABCD-EFG", "ABCD-EFGH"))
  }
}
