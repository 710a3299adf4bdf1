import Foundation
import Testing

@testable import FluxInspector

/// Apps connect over real sockets on the loopback address, and each is a session of the page.
@Suite("Apps connect and are sessions")
struct LiveSessionTests {
  @Test func anAppThatSaysHelloIsWelcomedAndItsLinesAreItsSession() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      #expect(await app.hello() == #"{"type":"welcome","protocol":1,"have":0}"#)
      for n in 0..<3 { app.line(n) }
      let sessions = try await eventually {
        let list = object(try await fetch("/live/sessions", port: server.port).body)
        let session = (list["sessions"] as? [[String: Any]])?.first
        return session?["lines"] as? Int == 3
      }
      #expect(sessions)
      let list = object(try await fetch("/live/sessions", port: server.port).body)
      let session = try #require((list["sessions"] as? [[String: Any]])?.first)
      #expect(session["app"] as? String == "todo")
      #expect(session["pid"] as? Int == 77)
      #expect(session["live"] as? Bool == true)
      #expect((session["stores"] as? [[String: Any]])?.map { $0["label"] as? String } == ["lists", "settings"])
      let document = object(
        try await fetch("/live/session?session=\(session["id"] as? Int ?? 0)", port: server.port).body)
      let items = try #require(document["items"] as? [[String: Any]])
      #expect(items.map { $0["line"] as? Int } == [1, 2, 3])
      #expect(items.allSatisfy { ($0["raw"] as? String)?.contains("Milk") == true && $0["error"] == nil })
    }
  }

  @Test func anAppBusySendingItsLinesHearsAPingWhenTheInspectorSentItNothing() async throws {
    try await withLiveServer(pingInterval: .milliseconds(300)) { server in
      let app = try FakeApp(port: server.appsPort)
      app.skipsPings = false
      #expect(await app.hello() == #"{"type":"welcome","protocol":1,"have":0}"#)
      // The app is never silent, so it sends no ping of its own: only the inspector's keep the
      // app from taking its connection for half-open.
      let sender = Task {
        for n in 0..<1000 where !Task.isCancelled {
          app.line(n)
          try await Task.sleep(for: .milliseconds(50))
        }
      }
      defer { sender.cancel() }
      #expect(await app.readLine() == #"{"type":"ping"}"#)
      #expect(await app.readLine() == #"{"type":"ping"}"#)
      app.send(#"{"type":"pong"}"#)
      app.send(#"{"type":"ping"}"#)
      app.skipsPings = true
      #expect(await app.readLine() == #"{"type":"pong"}"#)
    }
  }

  @Test func theSessionsTogetherKeepAtMostTheirBytesAndTheLargestGivesUpItsOldest() async throws {
    try await withLiveServer(sessionBytes: 1 << 20) { server in
      let note = #""note":""# + String(repeating: "x", count: 10_000) + #"","#
      let big = try FakeApp(port: server.appsPort)
      _ = await big.hello()
      for n in 0..<130 { big.line(n, extra: note) }
      #expect(try await eventually(60) { try await Self.lines(server, session: 1) == 130 })
      let small = try FakeApp(port: server.appsPort)
      _ = await small.hello()
      for n in 0..<20 { small.line(n, extra: note) }
      #expect(try await eventually(60) { try await Self.lines(server, session: 2) == 20 })
      let first = try await fetch("/live/session?session=1", port: server.port).body
      let second = try await fetch("/live/session?session=2", port: server.port).body
      #expect(first.utf8.count + second.utf8.count < (1 << 20) + (64 << 10))
      let kept = try #require(object(first)["items"] as? [[String: Any]])
      #expect(object(first)["first"] as? Int ?? 0 > 20)
      #expect(kept.last?["line"] as? Int == 130)
      #expect(object(second)["first"] as? Int == 0)
      #expect((object(second)["items"] as? [Any])?.count == 20)
    }
  }

  @Test func aStateNameIsKeptToItsFirstBytesHoweverItsCharactersAreMade() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      // One character: a letter and 100,000 accents on it.
      let name = "S" + String(repeating: "\u{301}", count: 100_000)
      app.send(
        #"{"type":"hello","protocol":1,"app":"todo","session":"s","pid":1,"platform":"Linux","next":0,"#
          + #""stores":[{"label":"lists","state":"\#(name)","steerable":true}]}"#)
      #expect(await app.readLine()?.contains("welcome") == true)
      let list = object(try await fetch("/live/sessions", port: server.port).body)
      let stores = try #require((list["sessions"] as? [[String: Any]])?.first?["stores"] as? [[String: Any]])
      let state = try #require(stores.first?["state"] as? String)
      #expect(state.unicodeScalars.first == "S" && state.utf8.count <= 256, "\(state.utf8.count) bytes")
    }
  }

  @Test func aReconnectContinuesItsSessionFromTheLinesTheInspectorHas() async throws {
    try await withLiveServer { server in
      let first = try FakeApp(port: server.appsPort, session: "the-same-process")
      _ = await first.hello()
      for n in 0..<3 { first.line(n) }
      #expect(try await eventually { try await Self.lines(server, session: 1) == 3 })
      first.kill()
      #expect(try await eventually { try await Self.session(server, 1)?["live"] as? Bool == false })
      let again = try FakeApp(port: server.appsPort, session: "the-same-process")
      #expect(await again.hello() == #"{"type":"welcome","protocol":1,"have":3}"#)
      again.line(3)
      #expect(try await eventually { try await Self.lines(server, session: 1) == 4 })
      let list = object(try await fetch("/live/sessions", port: server.port).body)
      #expect((list["sessions"] as? [Any])?.count == 1)
      #expect(try await Self.session(server, 1)?["live"] as? Bool == true)
    }
  }

  @Test func twoAppsAtOnceAreTwoSessions() async throws {
    try await withLiveServer { server in
      let one = try FakeApp(port: server.appsPort)
      let two = try FakeApp(port: server.appsPort)
      _ = await one.hello()
      _ = await two.hello()
      one.line(0)
      two.line(0)
      two.line(1)
      #expect(try await eventually { try await Self.lines(server, session: 1) == 1 })
      #expect(try await eventually { try await Self.lines(server, session: 2) == 2 })
    }
  }

  @Test func linesThatNeverCameAndGapsTheAppReportsAreShownAsGaps() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.line(0)
      app.send(#"{"type":"gap","from":1,"count":412,"reason":"buffer"}"#)
      app.line(413)
      app.line(420)
      app.line(5)  // already counted: ignored
      #expect(try await eventually { try await Self.lines(server, session: 1) == 421 })
      let items = try #require(
        object(try await fetch("/live/session?session=1", port: server.port).body)["items"] as? [[String: Any]])
      let gaps = items.compactMap { $0["gap"] as? [String: Any] }
      #expect(gaps.map { $0["from"] as? Int } == [1, 414])
      #expect(gaps.map { $0["count"] as? Int } == [412, 6])
      #expect(gaps.map { $0["reason"] as? String } == ["buffer", "missing"])
      #expect(items.compactMap { $0["line"] as? Int } == [1, 414, 421])
    }
  }

  @Test func aBadLogLineFromAnAppIsShownInPlaceAsABadLine() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.send(#"{"type":"line","n":0,"line":{"store":"lists","outcome":"committed"}}"#)
      app.send(
        #"{"type":"line","n":1,"line":{"store":"a","store":"b","time":"2026-11-23T03:07:49.123Z","outcome":"committed","action":1}}"#
      )
      app.line(2)
      #expect(try await eventually { try await Self.lines(server, session: 1) == 3 })
      let items = try #require(
        object(try await fetch("/live/session?session=1", port: server.port).body)["items"] as? [[String: Any]])
      #expect(items.count == 3)
      #expect(items[0]["error"] is String)
      #expect((items[1]["error"] as? String)?.contains("\"store\"") == true, "\(items[1])")
      #expect(items[2]["error"] == nil)
    }
  }

  @Test func theSessionsEventsCarryNewLinesAndTheSessionsFacts() async throws {
    try await withLiveServer { server in
      let app = try FakeApp(port: server.appsPort)
      _ = await app.hello()
      app.line(0)
      #expect(try await eventually { try await Self.lines(server, session: 1) == 1 })
      let events = try Connection(port: server.port)
      events.send("/live/events?session=1&from=1&version=0")
      app.line(1, action: #"{"add":{"title":"Bread"}}"#)
      let event = await events.event("event: items")
      #expect(event.contains(#"\"Bread\""#))
      #expect(event.contains(#""from":1,"end":2"#))
      let reset = try Connection(port: server.port)
      reset.send("/live/events?session=9&from=0&version=0")
      #expect(await reset.event("event: reset").contains("no longer kept"))
    }
  }

  static func session(_ server: LiveServer, _ id: Int) async throws -> [String: Any]? {
    let list = object(try await fetch("/live/sessions", port: server.port).body)
    return (list["sessions"] as? [[String: Any]])?.first { $0["id"] as? Int == id }
  }

  static func lines(_ server: LiveServer, session id: Int) async throws -> Int? {
    try await session(server, id)?["lines"] as? Int
  }
}
