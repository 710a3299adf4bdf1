import Foundation
import Testing

@testable import FluxInspector

/// Commands from the page reach the app, and its answers come back: to the page and into the
/// session's timeline.
@Suite("Commands to a running app")
struct CommandTests {
  @Test func onlyAPauseTheAppTookMarksTheSessionPaused() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      // An action that reads like a pause is a dispatch all the same.
      async let dispatched = command(
        #""session":1,"store":"lists","command":"dispatch","action":{"x":{"command":"pause"}}"#, port: server.port,
        token: server.token)
      #expect(await app.readLine()?.contains(#""command":"dispatch""#) == true)
      app.send(#"{"type":"ack","id":1,"ok":true,"outcome":"dispatched"}"#)
      #expect(try await dispatched.status == 200)
      #expect(try await Self.isPaused(server) == false)
      async let paused = command(
        #""session":1,"store":"lists","command":"pause""#, port: server.port, token: server.token)
      #expect(await app.readLine() == #"{"type":"command","id":2,"store":"lists","command":"pause"}"#)
      app.send(#"{"type":"ack","id":2,"ok":true,"outcome":"paused"}"#)
      #expect(try await paused.status == 200)
      #expect(try await Self.isPaused(server) == true)
    }
  }

  static func isPaused(_ server: LiveServer) async throws -> Bool? {
    let list = object(try await fetch("/live/sessions", port: server.port).body)
    return (list["sessions"] as? [[String: Any]])?.first?["paused"] as? Bool
  }

  @Test func aCommandFromThePageReachesTheAppAndItsAnswerComesBack() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      for n in 0..<13 { app.line(n) }
      #expect(try await eventually { try await LiveSessionTests.lines(server, session: 1) == 13 })
      async let reply = command(
        #""session":1,"store":"lists","command":"jump","to":12"#, port: server.port, token: server.token)
      let received = await app.readLine()
      #expect(received == #"{"type":"command","id":1,"store":"lists","command":"jump","to":12}"#)
      app.send(#"{"type":"ack","id":1,"ok":true,"outcome":"jumped lists to after #12"}"#)
      let answer = try await reply
      #expect(answer.status == 200)
      #expect(object(answer.body)["outcome"] as? String == "jumped lists to after #12")
      let items = try #require(
        object(try await fetch("/live/session?session=1", port: server.port).body)["items"] as? [[String: Any]])
      let shown = try #require(items.last)
      #expect((shown["command"] as? [String: Any])?["command"] as? String == "jump")
      #expect((shown["ack"] as? [String: Any])?["ok"] as? Bool == true)
    }
  }

  @Test(
    arguments: [
      (
        #""session":1,"store":"lists","command":"dispatch","action":{"add":{"title":"Tea"}}"#,
        #"{"type":"command","id":1,"store":"lists","command":"dispatch","action":{"add":{"title":"Tea"}}}"#
      ),
      (
        #""session":1,"store":"lists","command":"dispatch","action":{"add":{"title":"Tea"}}"#.replacingOccurrences(
          of: ":{", with: ":\n{"),
        #"{"type":"command","id":1,"store":"lists","command":"dispatch","action":{"add": {"title":"Tea"}}}"#
      ),
      (
        #""session":1,"store":"lists","command":"skip","at":0"#,
        #"{"type":"command","id":1,"store":"lists","command":"skip","at":0}"#
      ),
      (
        #""session":1,"store":"lists","command":"present""#,
        #"{"type":"command","id":1,"store":"lists","command":"present"}"#
      ),
      (
        #""session":1,"store":"lists","command":"pause""#,
        #"{"type":"command","id":1,"store":"lists","command":"pause"}"#
      ),
      (
        #""session":1,"store":"lists","command":"import","lines":[{"store":"lists"},{"a":[1,2]}]"#,
        #"{"type":"command","id":1,"store":"lists","command":"import","lines":[{"store":"lists"},{"a":[1,2]}]}"#
      ),
    ])
  func eachCommandGoesToTheAppOnOneLineAsItWasWritten(fields: String, message: String) async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.line(0)
      #expect(try await eventually { try await LiveSessionTests.lines(server, session: 1) == 1 })
      async let reply = command(fields, port: server.port, token: server.token)
      #expect(await app.readLine() == message)
      app.send(#"{"type":"ack","id":1,"ok":false,"error":"at add.title: expected a string"}"#)
      let answer = try await reply
      #expect(object(answer.body)["error"] as? String == "at add.title: expected a string")
    }
  }

  @Test func aCommandToAReadOnlyStoreOrALineNotSentIsRefusedWithoutReachingTheApp() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.line(0)
      #expect(try await eventually { try await LiveSessionTests.lines(server, session: 1) == 1 })
      let readOnly = try await command(
        #""session":1,"store":"settings","command":"present""#, port: server.port, token: server.token)
      #expect(
        object(readOnly.body)["error"] as? String
          == "the store settings is read-only: the app does not let it be steered")
      let unknown = try await command(
        #""session":1,"store":"nowhere","command":"present""#, port: server.port, token: server.token)
      #expect(object(unknown.body)["error"] as? String == "the app has no store nowhere")
      let ahead = try await command(
        #""session":1,"store":"lists","command":"jump","to":5"#, port: server.port, token: server.token)
      #expect(object(ahead.body)["error"] as? String == "the app sent no line 5 yet")
      app.send(#"{"type":"ping"}"#)
      #expect(await app.readLine() == #"{"type":"pong"}"#)
    }
  }

  @Test func aCommandTheAppDoesNotAnswerEndsAndSaysSo() async throws {
    try await withLiveServer(commandTimeout: .seconds(1)) { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      let answer = try await command(
        #""session":1,"store":"lists","command":"present""#, port: server.port, token: server.token)
      #expect(object(answer.body)["error"] as? String == "the app did not answer within 1 s")
      // A late answer is ignored.
      app.send(#"{"type":"ack","id":1,"ok":true}"#)
      app.send(#"{"type":"ping"}"#)
      #expect(await app.readLine() == #"{"type":"command","id":1,"store":"lists","command":"present"}"#)
      #expect(await app.readLine() == #"{"type":"pong"}"#)
    }
  }

  @Test func aCommandToAnAppThatIsKilledEndsWhenItGoes() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      async let reply = command(
        #""session":1,"store":"lists","command":"present""#, port: server.port, token: server.token)
      _ = await app.readLine()
      app.kill()
      #expect(object(try await reply.body)["error"] as? String == "the app disconnected before it answered")
      let gone = try await command(
        #""session":1,"store":"lists","command":"present""#, port: server.port, token: server.token)
      #expect(object(gone.body)["error"] as? String == "the app is not connected")
    }
  }

  /// Rule 21: each number and value of a command is checked before anything is sent.
  @Test(
    arguments: [
      (#""session":1,"store":"lists","command":"jump","to":-1"#, "to must be"),
      (#""session":1,"store":"lists","command":"jump","to":1e3"#, "to must be"),
      (#""session":1,"store":"lists","command":"jump","to":9223372036854775808"#, "to must be"),
      (#""session":1,"store":"lists","command":"jump","to":9007199254740992"#, "to must be"),
      (#""session":1,"store":"lists","command":"jump","to":"3""#, "to must be"),
      (#""session":1,"store":"lists","command":"jump""#, "to must be"),
      (#""session":1,"store":"lists","command":"skip","at":1.5"#, "at must be"),
      (#""session":99999999999999999999,"store":"lists","command":"present""#, "session must be"),
      (#""session":1,"store":"","command":"present""#, "store must be"),
      (#""session":1,"store":"lists","command":"explode""#, "command must be"),
      (#""session":1,"store":"lists","command":"dispatch""#, "action is missing"),
      (#""session":1,"store":"lists","command":"dispatch","action":{"a":1,"a":2}"#, "twice"),
      (#""session":1,"store":"lists","command":"import","lines":{"a":1}"#, "lines must be"),
      (#""session":1,"store":"lists","command":"import","lines":[1]"#, "not a JSON object"),
      (#""session":1,"store":"lists","command":"import","lines":[{"b":1,"b":1}]"#, "twice"),
      (#""session":1,"store":"lists","command":"present"} {"#, "not JSON"),
    ])
  func inv21_aCommandWithANumberOutOfRangeOrAValueThatIsNotRightIsRefusedWith400(fields: String, words: String)
    async throws
  {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.line(0)
      #expect(try await eventually { try await LiveSessionTests.lines(server, session: 1) == 1 })
      let answer = try await command(fields, port: server.port, token: server.token)
      #expect(answer.status == 400, "\(fields): \(answer.status) \(answer.body)")
      #expect(answer.body.contains(words), "\(fields): \(answer.body)")
      app.send(#"{"type":"ping"}"#)
      #expect(await app.readLine() == #"{"type":"pong"}"#, "the app got a command for \(fields)")
    }
  }
}

/// Rule 21: a command that changes a running app comes from the inspector's own page only.
@Suite("Commands from anywhere else are refused")
struct CommandAccessTests {
  static let fields = #""session":1,"store":"lists","command":"present""#

  @Test(
    arguments: [
      (["Host: 127.0.0.1:PORT", "Content-Type: application/json"], "TOKEN", "no Origin"),
      (
        ["Host: 127.0.0.1:PORT", "Origin: http://evil.example", "Content-Type: application/json"], "TOKEN",
        "Origin \"http://evil.example\""
      ),
      (
        ["Host: 127.0.0.1:PORT", "Origin: http://localhost:PORT", "Content-Type: application/json"], "TOKEN",
        "is not this inspector's page"
      ),
      (["Host: 127.0.0.1:PORT", "Origin: null", "Content-Type: application/json"], "TOKEN", "Origin \"null\""),
      (
        [
          "Host: 127.0.0.1:PORT", "Origin: http://127.0.0.1:PORT", "Origin: http://127.0.0.1:PORT",
          "Content-Type: application/json",
        ], "TOKEN", "2 Origin headers"
      ),
      (
        ["Host: 127.0.0.1:PORT", "Origin: http://127.0.0.1:PORT", "Content-Type: text/plain"], "TOKEN",
        "Content-Type is \"text/plain\""
      ),
      (
        ["Host: 127.0.0.1:PORT", "Origin: http://127.0.0.1:PORT", "Content-Type: application/json"], nil,
        "it has no token"
      ),
      (
        ["Host: 127.0.0.1:PORT", "Origin: http://127.0.0.1:PORT", "Content-Type: application/json"],
        "0123456789abcdef0123456789abcdef", "its token is not this run's"
      ),
      (
        ["Host: 127.0.0.1:PORT", "Origin: http://127.0.0.1:PORT", "Content-Type: application/json"], "",
        "its token is not this run's"
      ),
    ] as [([String], String?, String)])
  func inv21_aCommandFromAnotherOriginOrWithoutTheTokenIsRefusedWith403AndSaid(
    headers: [String], token: String?, reason: String
  ) async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      let headers = headers.map { $0.replacingOccurrences(of: "PORT", with: "\(server.port)") }
      let token = token.map { $0 == "TOKEN" ? server.token : $0 }
      let answer = try await command(Self.fields, port: server.port, token: token, headers: headers)
      #expect(answer.status == 403, "\(headers): \(answer.status) \(answer.body)")
      #expect(answer.body.contains(reason), "\(answer.body)")
      #expect(
        server.output.lines.contains { $0.contains("refused a command") && $0.contains(reason) },
        "\(server.output.lines)")
      app.send(#"{"type":"ping"}"#)
      #expect(await app.readLine() == #"{"type":"pong"}"#, "the app got the command")
    }
  }

  @Test(arguments: ["Host: evil.example:PORT", "Host: 127.0.0.1:OTHER", "Host: 127.0.0.1.evil.example:PORT"])
  func inv21_aCommandForAnotherHostIsRefusedWith403(host: String) async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      let named = host.replacingOccurrences(of: "OTHER", with: "\(server.port + 1)")
        .replacingOccurrences(of: "PORT", with: "\(server.port)")
      let origin = "Origin: http://" + named.dropFirst("Host: ".count)
      let answer = try await command(
        Self.fields, port: server.port, token: server.token, headers: [named, origin, "Content-Type: application/json"])
      #expect(answer.status == 403)
      app.send(#"{"type":"ping"}"#)
      #expect(await app.readLine() == #"{"type":"pong"}"#, "the app got the command")
    }
  }

  @Test func theTokenIsInThePageOnlyAndNewForEachRun() async throws {
    let first = try await withLiveServer { server in server.token }
    let second = try await withLiveServer { server throws in
      let sessions = try await fetch("/live/sessions", port: server.port).body
      let script = try await fetch("/inspector.js", port: server.port).body
      #expect(!sessions.contains(server.token) && !script.contains(server.token))
      return server.token
    }
    #expect(first.count == 32 && second.count == 32)
    #expect(first != second)
  }

  @Test func inv21_thePageWithTheTokenIsShownInNoOtherSitesFrame() async throws {
    // A page of another site that frames this one would have a person click its controls, which
    // send commands from this page's own origin with its token.
    try await withLiveServer { server in
      for path in ["/", "/inspector.js", "/live/sessions"] {
        let head = try await fetch(path, port: server.port).head.lowercased()
        #expect(head.contains("x-frame-options: deny"), "\(path): \(head)")
        let policy = head.split(separator: "\r\n").first { $0.hasPrefix("content-security-policy:") } ?? ""
        #expect(policy.contains("frame-ancestors 'none'"), "\(path): \(head)")
      }
    }
  }

  @Test func aCommandWithTheTokenFromThePagesOwnOriginOnLocalhostIsTaken() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      async let reply = command(
        Self.fields, port: server.port, token: server.token,
        headers: [
          "Host: localhost:\(server.port)", "Origin: http://localhost:\(server.port)",
          "Content-Type: application/json; charset=utf-8",
        ])
      _ = await app.readLine()
      app.send(#"{"type":"ack","id":1,"ok":true,"outcome":"back to the present"}"#)
      #expect(try await reply.status == 200)
    }
  }
}

@Suite("Commands when an app reconnects")
struct ReconnectCommandTests {
  @Test func inv21_aCommandForTheSessionOfAnAppThatIsNotTheOneThePageShowsReachesNoApp() async throws {
    try await withLiveServer(commandTimeout: .seconds(2)) { server in
      // Started again, the inspector numbers sessions anew: session 1 is now another app's than
      // the one a page loaded before shows as session 1.
      let other = try FakeApp(port: server.appsPort, session: "another-process")
      _ = await other.hello()
      let stale = try await command(
        #""session":1,"key":"the-process-shown","store":"lists","command":"pause""#, port: server.port,
        token: server.token)
      let refusal = object(stale.body)
      #expect(refusal["ok"] as? Bool == false)
      #expect((refusal["error"] as? String)?.contains("another app's") == true, "\(refusal)")
      async let reply = command(
        #""session":1,"key":"another-process","store":"lists","command":"pause""#, port: server.port,
        token: server.token)
      // The first command the app gets is the one for its own session.
      #expect(await other.readLine() == #"{"type":"command","id":1,"store":"lists","command":"pause"}"#)
      other.send(#"{"type":"ack","id":1,"ok":true,"outcome":"paused"}"#)
      #expect(object(try await reply.body)["outcome"] as? String == "paused")
      let bad = try await command(
        #""session":1,"key":7,"store":"lists","command":"pause""#, port: server.port, token: server.token)
      #expect(bad.status == 400)
    }
  }

  @Test func aCommandSentBeforeTheAppReconnectedEndsWhenItDoes() async throws {
    try await withLiveServer { server in
      let old = try FakeApp(port: server.appsPort, session: "one-process")
      _ = await old.hello()
      async let reply = command(
        #""session":1,"store":"lists","command":"present""#, port: server.port, token: server.token)
      _ = await old.readLine()
      // The old connection seems open (half-open): the app reconnects on a new one.
      let new = try FakeApp(port: server.appsPort, session: "one-process")
      #expect(await new.hello().contains("welcome"))
      #expect(object(try await reply.body)["error"] as? String == "the app reconnected before it answered")
      #expect(await old.isClosed())
    }
  }

  @Test func anAppThatReconnectsWhileThePageSendsCommandsHearsItsWelcomeFirst() async throws {
    try await withLiveServer { server in
      let first = try FakeApp(port: server.appsPort, session: "one-process")
      #expect(await first.hello().contains("welcome"))
      let stop = LiveServer.Output()
      // Pages that send commands all the time: one reaches each new connection as soon as the
      // inspector knows it.
      let senders = (0..<2).map { _ in
        Task {
          while stop.lines.isEmpty {
            _ = try? await command(
              #""session":1,"store":"lists","command":"present""#, port: server.port, token: server.token)
          }
        }
      }
      var answers: [String] = []
      for _ in 0..<100 {
        let app = try FakeApp(port: server.appsPort, session: "one-process")
        answers.append(await app.hello())
      }
      stop.add("stop")
      for sender in senders { _ = await sender.result }
      let wrong = answers.filter { !$0.hasPrefix(#"{"type":"welcome""#) }
      #expect(wrong.isEmpty, "\(wrong.count) of \(answers.count) hellos answered first with: \(wrong.prefix(3))")
    }
  }
}
