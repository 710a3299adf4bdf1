import Foundation
import Testing

@testable import FluxInspector

/// Rule 21: every request is hostile. A page on any other origin can make the browser send a
/// request with any numbers in it (one `<img>` does), and a name it controls can resolve to
/// 127.0.0.1 (DNS rebinding), so the server checks the numbers and the `Host` it is asked for.
@Suite("Requests from anywhere: numbers and hosts")
struct HostileRequestTests {
  /// Each query names what is wrong with it; none may stop the server (which runs in a process
  /// of its own here, so that a trap is a failed test).
  static let badQueries: [(query: String, words: String)] = [
    ("from=0&line=9223372036854775807", "line"),
    ("from=0&line=9223372036854775808", "line"),
    ("from=0&line=99999999999999999999999999", "line"),
    ("from=0&line=0", "line"),
    ("from=0&line=-1", "line"),
    ("from=0&line=abc", "line"),
    ("from=0&line=1.5", "line"),
    ("from=0&line=", "line"),
    ("from=0", "line"),
    ("from=9223372036854775807&line=1", "from"),
    ("from=-1&line=1", "from"),
    ("from=-9223372036854775808&line=1", "from"),
    ("from=abc&line=1", "from"),
    ("from=&line=1", "from"),
    ("from=1e3&line=1", "from"),
    ("from=0x10&line=1", "from"),
    ("from=+5&line=1", "from"),
    ("from=%205&line=1", "from"),
    ("line=1", "from"),
    ("from=0&from=5&line=1", "from"),
    ("from=0&line=1&line=2", "line"),
    ("from=0&line=1", "identity"),
    ("from=0&line=1&identity=", "identity"),
    ("from=0&line=1&identity=abc", "identity"),
    ("from=0&line=1&identity=1-99999999999999999999999-0000000000000000", "identity"),
    ("from=0&line=1&identity=-1-2-0000000000000000", "identity"),
    ("from=0&line=1&identity=1-2-+000000000000000", "identity"),
    ("from=0&line=1&identity=1-2-00000000000000000", "identity"),
    ("from=0&line=1&identity=1-2-0000000000000000&identity=1-2-0000000000000000", "identity"),
  ]

  @Test func eventsRefuseEveryNumberOutOfRangeOrNotANumberWith400AndKeepServing() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let server = try await ServerProcess([log])
    for (query, words) in Self.badQueries {
      let reply = try await fetch("/events?\(query)", port: server.port)
      #expect(reply.status == 400, "\(query) answered \(reply.status): \(reply.body)")
      #expect(reply.body.contains(words), "\(query) answered \(reply.body)")
      #expect(!reply.body.contains("Swift") && !reply.body.contains("Int"), "\(query) answered \(reply.body)")
      #expect(server.isRunning, "\(query) stopped the server: \(server.ending)")
      guard server.isRunning else { return }
    }
    #expect(try await fetch("/", port: server.port).status == 200)
  }

  @Test func aQueryThatIsRightAfterABadOneIsStillServed() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      #expect(try await fetch("/events?from=zero&line=1", port: port).status == 400)
      let document = try ServedDocument(try await fetch("/log", port: port).body)
      let events = try Connection(port: port)
      events.send(document.eventsTarget)
      let head = await events.read(until: "retry:")
      #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
    }
  }

  /// The hosts a browser names when the page is opened at the server's own address.
  @Test(arguments: ["127.0.0.1:PORT", "localhost:PORT", "LocalHost:PORT", "[::1]:PORT"])
  func requestsForTheServersOwnAddressAreAnswered(host: String) async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log) { port throws in
      let headers = ["Host: " + host.replacingOccurrences(of: "PORT", with: "\(port)")]
      for target in ["/", "/inspector.js", "/log"] {
        #expect(try await fetch(target, port: port, headers: headers).status == 200, "\(target) for \(host)")
      }
    }
  }

  /// What a page on another site sends once its name resolves to 127.0.0.1 (DNS rebinding), and
  /// other hosts that are not this server.
  @Test(
    arguments: [
      ["Host: evil.example:PORT"], ["Host: evil.example"], ["Host: 127.0.0.1.evil.example:PORT"],
      ["Host: localhost.evil.example:PORT"], ["Host: 127.0.0.1:OTHER"], ["Host: localhost"], ["Host: 127.0.0.1"],
      ["Host: 127.0.0.2:PORT"], ["Host: 0.0.0.0:PORT"], ["Host: "], [],
      ["Host: 127.0.0.1:PORT", "Host: evil.example:PORT"], ["Host: evil.example:PORT", "Host: 127.0.0.1:PORT"],
      ["Host: 127.0.0.1:PORT@evil.example"], ["Host: user@127.0.0.1:PORT"], ["Host: 127.0.0.1:PORT:PORT"],
    ])
  func requestsForAnyOtherHostAreRefusedWithAMessage(headers: [String]) async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line(store: "secret") + "\n")
    try await withServer(logPath: log) { port throws in
      let headers = headers.map {
        $0.replacingOccurrences(of: "OTHER", with: "\(port == 1 ? 2 : port - 1)")
          .replacingOccurrences(of: "PORT", with: "\(port)")
      }
      for target in ["/", "/log", "/events?from=0&line=1", "/inspector.js"] {
        let reply = try await fetch(target, port: port, headers: headers)
        #expect(reply.status == 403 || reply.status == 400, "\(target) with \(headers) answered \(reply.status)")
        #expect(!reply.body.contains("secret"), "\(target) with \(headers) answered \(reply.body)")
        #expect(
          reply.status == 400 || reply.body.contains("127.0.0.1:\(port)"),
          "\(target) with \(headers) answered \(reply.body)")
      }
    }
  }

  @Test func aServerListeningOnAnotherAddressAnswersForThatAddressToo() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    try await withServer(logPath: log, host: "127.0.0.3") { port throws in
      let connection = try Connection(port: port, address: "127.0.0.3")
      connection.send("/log", headers: ["Host: 127.0.0.3:\(port)"])
      #expect(await connection.read().hasPrefix("HTTP/1.1 200"))
      let other = try Connection(port: port, address: "127.0.0.3")
      other.send("/log", headers: ["Host: evil.example:\(port)"])
      #expect(await other.read().hasPrefix("HTTP/1.1 403"))
    }
  }
}
