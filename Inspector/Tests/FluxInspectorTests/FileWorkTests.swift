import Foundation
import Testing

@testable import FluxInspector

/// Rule 21: file work never blocks the threads that answer requests, and a log or its folder,
/// however large, neither stops the server nor makes it read the same bytes again and again.
@Suite("File work beside the requests")
struct FileWorkTests {
  @Test func thousandsOfFilesBesideTheLogWithTenLivePagesNeitherStopNorStallTheServer() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    // Short names, many to a block of the folder: with the scan of the folder that the server
    // once made, this stopped it within a request or two.
    for index in 0..<3000 {
      let name = "\(index)-nnnnnnnnnn"
      #expect(FileManager.default.createFile(atPath: scratch.path(name), contents: Data()))
    }
    let server = try await ServerProcess([log])
    let document = try ServedDocument(try await fetch("/log", port: server.port).body)
    var pages: [Connection] = []
    for _ in 0..<10 {
      let page = try Connection(port: server.port)
      page.send(document.eventsTarget)
      pages.append(page)
    }
    for page in pages { await page.read(until: "retry:") }
    let handle = try #require(FileHandle(forWritingAtPath: log))
    for round in 0..<20 {
      handle.seekToEndOfFile()
      handle.write(Data((Fixture.line(store: "s\(round)") + "\n").utf8))
      #expect(try await fetch("/log", port: server.port).status == 200, "round \(round): \(server.ending)")
      guard server.isRunning else { break }
    }
    try handle.close()
    for page in pages {
      #expect(await page.read(until: #"\"store\":\"s19\""#).contains(#"\"store\":\"s19\""#))
    }
    #expect(server.isRunning, "the server stopped: \(server.ending)")
    #expect(try await fetch("/", port: server.port).status == 200)
  }

  /// Not a measure of speed: the page is asked for while the log is still being checked (which
  /// takes seconds for 100,000 lines), and must be answered before any of the three requests
  /// for the log that came first.
  @Test func thePageIsServedWhileABigLogIsCheckedWithThreeRequestsForTheLogWaiting() async throws {
    let scratch = try Scratch()
    let line = Fixture.line()
    let log = try scratch.write("big.jsonl", String(repeating: line + "\n", count: 100_000))
    // The program as users run it: its threads are its own.
    let server = try await ServerProcess([log])
    let port = server.port
    let finished = Finished()
    var requests: [Task<Void, any Error>] = []
    for index in 0..<3 {
      requests.append(
        Task {
          // Checking takes minutes under the thread sanitizer.
          let connection = try Connection(port: port, patience: 600)
          connection.send("/log")
          // When the answer starts: a long one takes a while to arrive whole.
          let head = await connection.read(until: "\r\n")
          finished.add("log \(index): \(head.prefix(12))")
          let reply = await connection.read()
          #expect(reply.contains(#"{"line":100000,"#), "log \(index): \(reply.prefix(200))")
        })
    }
    // Let the three requests reach the server first.
    try await Task.sleep(for: .milliseconds(300))
    let page = try await fetch("/", port: port, patience: 120)
    finished.add("page: HTTP/1.1 \(page.status)")
    for request in requests { try await request.value }
    #expect(finished.names.first == "page: HTTP/1.1 200", "\(finished.names)")
    #expect(finished.names.filter { $0.hasSuffix(" 200") }.count == 4, "\(finished.names)")
  }

  /// Not a measure of speed: ten pages follow the log, and each checks the 2 MB appended to
  /// it; the page is asked for once the first of them has sent its lines, and must be answered
  /// before the last of them has.
  @Test func thePageIsServedWhileTenFollowingPagesCheckWhatIsAppended() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let server = try await ServerProcess([log])
    let port = server.port
    let document = try ServedDocument(try await fetch("/log", port: port).body)
    var pages: [Connection] = []
    for _ in 0..<10 {
      // Checking takes minutes under the thread sanitizer.
      let page = try Connection(port: port, patience: 600)
      page.send(document.eventsTarget)
      pages.append(page)
    }
    for page in pages { await page.read(until: "retry:") }
    let line = Fixture.line(extra: #""state":{"note":"\#(String(repeating: "n", count: 900))"},"#) + "\n"
    let handle = try #require(FileHandle(forWritingAtPath: log))
    handle.seekToEndOfFile()
    handle.write(Data(String(repeating: line, count: (2 << 20) / line.utf8.count).utf8))
    try handle.close()
    let finished = Finished()
    var followers: [Task<Void, Never>] = []
    for (index, page) in pages.enumerated() {
      followers.append(
        Task {
          let event = await page.read(until: "event: lines")
          finished.add("page \(index): \(event.contains("event: lines") ? "lines" : "none")")
        })
    }
    while finished.names.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
    let page = try await fetch("/", port: port, patience: 600)
    finished.add("page: HTTP/1.1 \(page.status)")
    for follower in followers { await follower.value }
    #expect(finished.names.contains("page: HTTP/1.1 200"), "\(finished.names)")
    #expect(finished.names.last != "page: HTTP/1.1 200", "\(finished.names)")
    #expect(finished.names.filter { $0.hasSuffix(": lines") }.count == 10, "\(finished.names)")
    #expect(server.isRunning, "\(server.ending)")
  }

  /// A line being written, 8 MB long so far: the server reads what is appended to it, not the
  /// whole line again at every look at the log.
  @Test func anUnfinishedLastLineIsNotReadAgainAtEveryLookAtTheLog() async throws {
    let scratch = try Scratch()
    let first = Fixture.line() + "\n"
    let size = 8_000_000
    let unfinished = #"{"action":{"say":{"_0":""# + String(repeating: "x", count: size)
    let log = try scratch.write("session.jsonl", first + unfinished)
    let server = try await ServerProcess([log])
    let events = try Connection(port: server.port, patience: 120)
    let document = try ServedDocument(try await fetch("/log", port: server.port, patience: 120).body)
    #expect(document.object["partial"] as? Bool == true)
    events.send(document.eventsTarget)
    await events.read(until: "retry:")
    let before = server.bytesRead
    // About ten looks at the log, five times a second; this waits for none of them in
    // particular: fewer would only make the test weaker.
    for _ in 0..<10 {
      try await Task.sleep(for: .milliseconds(200))
      let handle = try #require(FileHandle(forWritingAtPath: log))
      handle.seekToEndOfFile()
      handle.write(Data(String(repeating: "y", count: 1000).utf8))
      try handle.close()
    }
    let handle = try #require(FileHandle(forWritingAtPath: log))
    handle.seekToEndOfFile()
    let rest = Fixture.line().dropFirst(#"{"action":{"add":{"_0":2}},"#.count)
    handle.write(Data((#""}},"# + rest + "\n").utf8))
    try handle.close()
    let event = await events.event("event: lines")
    #expect(event.contains(#"{"line":2,"#), "\(event.prefix(300))")
    let read = server.bytesRead - before
    // Once to find its end, once to check it: not once per look.
    #expect(read < 3 * size, "\(read) bytes read for a line of \(size)")
    #expect(server.isRunning, "\(server.ending)")
  }
}

/// The order in which requests finished.
private final class Finished: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var list: [String] = []

  func add(_ name: String) { lock.withLock { list.append(name) } }

  var names: [String] { lock.withLock { list } }
}
