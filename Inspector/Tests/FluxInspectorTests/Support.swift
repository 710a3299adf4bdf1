import Foundation
import NIOCore
import Testing

@testable import FluxInspector

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A folder of its own for one test, removed at the end.
struct Scratch: ~Copyable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("flux-inspector-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `text` to the file `name`, and returns its path.
  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    try Data(text.utf8).write(to: url.appendingPathComponent(name))
    return path(name)
  }
}

/// Lines of an action log as the log writes them.
enum Fixture {
  static func line(
    store: String = "counter", action: String = #"{"add":{"_0":2}}"#, outcome: String = "committed",
    extra: String = ""
  ) -> String {
    let duration = outcome == "committed" ? #""durationNanoseconds":2125,"# : ""
    return
      #"{"action":\#(action),\#(duration)\#(extra)"outcome":"\#(outcome)","store":"\#(store)","time":"2026-11-23T03:07:49.123Z"}"#
  }
}

/// A server on a port the system chose, for the time of `body`.
func withServer<Result>(
  logPath: String, host: String = "127.0.0.1", pagedEntries: Int = 100_000, _ body: (Int) async throws -> Result
) async throws -> Result {
  let (addresses, continuation) = AsyncStream.makeStream(of: String.self)
  let server = InspectorServer(
    logPath: logPath, host: host, port: 0, pollInterval: .milliseconds(200), pagedEntries: pagedEntries)
  let task = Task {
    defer { continuation.finish() }
    try await server.run { address in continuation.yield(address) }
  }
  defer { task.cancel() }
  var iterator = addresses.makeAsyncIterator()
  guard let address = await iterator.next() else {
    try await task.value
    Issue.record("the server stopped before it listened")
    throw CancellationError()
  }
  let port = try #require(Int(address.split(separator: ":").last!.dropLast()))
  return try await body(port)
}

/// An HTTP response, as read from the socket.
struct HTTPReply: Sendable {
  var status: Int
  var head: String
  var body: String

  func header(_ name: String) -> String? {
    for line in head.split(separator: "\r\n").dropFirst() {
      let parts = line.split(separator: ":", maxSplits: 1)
      if parts.count == 2, parts[0].lowercased() == name.lowercased() {
        return parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return nil
  }
}

/// Runs `body`, which blocks, on a thread of its own: a blocked thread of the task pool, which
/// has as many threads as the machine has cores, could be the one the server needs to answer.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}

/// A connection to the loopback address, with reads that give up after `patience` quiet
/// seconds (ten unless told), or three times that in all, so that a test fails instead of
/// hanging.
///
/// Used by one test at a time.
final class Connection: @unchecked Sendable {
  private let socket: Int32
  private let host: String
  private let patience: Int
  private var buffer: [UInt8] = []

  init(port: Int, address: String = "127.0.0.1", patience: Int = 10) throws {
    host = "\(address):\(port)"
    self.patience = patience
    #if canImport(Glibc)
      socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard socket >= 0 else { throw POSIXError(.EIO) }
    var timeout = timeval(tv_sec: patience, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let ip = address
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr(ip)
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else {
      close(socket)
      throw POSIXError(.ECONNREFUSED)
    }
  }

  deinit { close(socket) }

  /// Sends a request for `target`, written as it is on the request line, with the `Host`
  /// header that a browser sends for the address connected to (`127.0.0.1:PORT`), or with the
  /// header lines given.
  func send(_ target: String, method: String = "GET", headers: [String]? = nil, body: String = "") {
    let lines = (headers ?? ["Host: \(host)"]) + ["Connection: close"]
    let request = "\(method) \(target) HTTP/1.1\r\n" + lines.map { $0 + "\r\n" }.joined() + "\r\n" + body
    let bytes = Array(request.utf8)
    var done = 0
    while done < bytes.count {
      let written = bytes.withUnsafeBytes { write(socket, $0.baseAddress! + done, bytes.count - done) }
      if written <= 0 { return }
      done += written
    }
  }

  /// Reads until `text` has come, or the connection ends or stays quiet for `patience` seconds.
  /// Returns everything read so far.
  @discardableResult
  func read(until text: String? = nil) async -> String {
    let needle = text.map { Array($0.utf8) }
    return
      (try? await blocking {
        var searched = 0
        return self.read {
          guard let needle else { return false }
          defer { searched = max(0, self.buffer.count - needle.count + 1) }
          return self.find(needle, from: searched) != nil
        }
      }) ?? ""
  }

  /// Reads until the event that starts with `marker` has come whole, and returns it.
  func event(_ marker: String) async -> String {
    let needle = Array(marker.utf8)
    let end = Array("\n\n".utf8)
    let received =
      (try? await blocking {
        var searched = 0
        var start: Int?
        return self.read {
          defer { searched = max(start.map { $0 + needle.count } ?? 0, self.buffer.count - needle.count + 1, 0) }
          if start == nil { start = self.find(needle, from: searched) }
          guard let start else { return false }
          return self.find(end, from: max(searched, start + needle.count)) != nil
        }
      }) ?? ""
    guard let start = received.range(of: marker) else { return "" }
    return String(received[start.lowerBound...])
  }

  /// Where `needle` first is in what was read, from byte `start`.
  private func find(_ needle: [UInt8], from start: Int) -> Int? {
    guard let first = needle.first, buffer.count >= needle.count else { return nil }
    var index = start
    while index <= buffer.count - needle.count {
      guard let found = buffer[index...].firstIndex(of: first), found <= buffer.count - needle.count else {
        return nil
      }
      if buffer[found..<(found + needle.count)].elementsEqual(needle) { return found }
      index = found + 1
    }
    return nil
  }

  private func read(until isDone: () -> Bool) -> String {
    var chunk = [UInt8](repeating: 0, count: 65536)
    // A stream of events never ends, and its comments keep it from going quiet.
    let deadline = Date().addingTimeInterval(Double(3 * patience))
    while !isDone() && Date() < deadline {
      let count = recv(socket, &chunk, chunk.count, 0)
      if count <= 0 { break }
      buffer.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: buffer, as: UTF8.self)
  }
}

/// Asks the server on `port` for `target`, and reads the whole reply.
func fetch(
  _ target: String, port: Int, method: String = "GET", headers: [String]? = nil, patience: Int = 10
) async throws -> HTTPReply {
  let connection = try Connection(port: port, patience: patience)
  connection.send(target, method: method, headers: headers)
  let text = await connection.read()
  guard let split = text.range(of: "\r\n\r\n") else { return HTTPReply(status: 0, head: text, body: "") }
  let head = String(text[..<split.lowerBound])
  var body = String(text[split.upperBound...])
  let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
  if head.lowercased().contains("transfer-encoding: chunked") { body = dechunk(body) }
  return HTTPReply(status: status, head: head, body: body)
}

private func dechunk(_ text: String) -> String {
  var rest = Substring(text)
  var out = ""
  while let lineEnd = rest.range(of: "\r\n") {
    guard let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 else { break }
    let start = rest.utf8.index(lineEnd.upperBound, offsetBy: 0)
    let end = rest.utf8.index(start, offsetBy: size)
    out += rest[start..<end]
    rest = rest[end...].dropFirst(2)
  }
  return out
}

/// The `flux-inspector` program, built beside the tests.
var inspectorExecutable: URL {
  URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flux-inspector")
}

/// Runs `flux-inspector` with `arguments` until it exits, and returns its exit status and what
/// it wrote to standard output and standard error.
func runInspector(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
  try await blocking { try runInspectorBlocking(arguments) }
}

private func runInspectorBlocking(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
  let process = Process()
  process.executableURL = inspectorExecutable
  process.arguments = arguments
  let output = Pipe()
  let error = Pipe()
  process.standardOutput = output
  process.standardError = error
  try process.run()
  let outputData = output.fileHandleForReading.readDataToEndOfFile()
  let errorData = error.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (
    process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self)
  )
}

/// `flux-inspector` serving a log in a process of its own, so that a crash is a failed test, not
/// the end of the test run.
final class ServerProcess: @unchecked Sendable {
  let process = Process()
  /// The port it listens on.
  let port: Int
  /// The port apps connect to.
  let appsPort: Int
  /// The pairing code it printed, with `--listen`.
  let pairingCode: String?
  private let errors = Pipe()

  /// Starts `flux-inspector` with `arguments` and waits until it prints its addresses; with
  /// `addressSpace`, it may map that many bytes of memory at most (`prlimit --as`).
  init(_ arguments: [String], addressSpace: Int? = nil) async throws {
    if let addressSpace {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
      process.arguments = ["--as=\(addressSpace)", "--", inspectorExecutable.path] + arguments
    } else {
      process.executableURL = inspectorExecutable
      process.arguments = arguments
    }
    // It is not expected to stop; if it does, without a backtrace that takes seconds to print.
    process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let reader = output.fileHandleForReading
    let listen = arguments.contains("--listen")
    let text = try await blocking {
      var printed = Data()
      let needed = listen ? 3 : 2
      while printed.filter({ $0 == UInt8(ascii: "\n") }).count < needed {
        let chunk = reader.availableData
        if chunk.isEmpty { break }
        printed += chunk
      }
      return String(decoding: printed, as: UTF8.self)
    }
    let lines = text.split(separator: "\n").map(String.init)
    guard let line = lines.first, line.hasPrefix("Flux Inspector: http://127.0.0.1:"),
      let port = Int(line.split(separator: ":")[3].prefix { $0.isNumber }),
      lines.count > 1, lines[1].hasPrefix("Apps connect with FLUX_INSPECTOR="),
      let appsPort = Int(lines[1].split(separator: ":").last ?? "")
    else {
      process.terminate()
      throw InspectorError("flux-inspector did not start: \(text)")
    }
    self.port = port
    self.appsPort = appsPort
    pairingCode = lines.count > 2 ? lines[2].split(separator: "=").last.map(String.init) : nil
  }

  deinit { stop() }

  /// Whether it still runs.
  var isRunning: Bool { process.isRunning }

  /// How the process ended, if it did: "exit N" or "signal N".
  var ending: String {
    guard !process.isRunning else { return "running" }
    return process.terminationReason == .uncaughtSignal
      ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)"
  }

  /// The bytes it has read from files and sockets so far (`rchar` of `/proc/PID/io`).
  var bytesRead: Int {
    let text = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/io", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("rchar:") }
    return line.flatMap { Int($0.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)) } ?? -1
  }

  /// What it wrote to standard error, once it stopped.
  var errorOutput: String {
    stop()
    return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  }

  /// Stops it and waits until it has.
  func stop() {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
  }
}

/// The log document that `/log` answers, read as JSON.
struct ServedDocument {
  let object: [String: Any]

  init(_ body: String) throws {
    object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
  }

  var entries: [[String: Any]] { object["entries"] as? [[String: Any]] ?? [] }

  /// What the page asks for to follow the log from where this document ends.
  var eventsTarget: String {
    let end = object["end"] as? Int ?? -1
    let lines = object["lines"] as? Int ?? -1
    let identity = (object["identity"] as? String).map { "&identity=\($0)" } ?? ""
    return "/events?from=\(end)&line=\(lines + 1)\(identity)"
  }
}

/// Where a live server is, and what it said in its output.
struct LiveServer: Sendable {
  let port: Int
  let appsPort: Int
  let pairingCode: String?
  let token: String
  let output: Output

  /// The lines the server said (refused commands and apps).
  final class Output: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var said: [String] = []
    func add(_ line: String) { lock.withLock { said.append(line) } }
    var lines: [String] { lock.withLock { said } }
  }
}

/// A server with no log, for apps, on ports the system chose, for the time of `body`.
func withLiveServer<Result>(
  logPath: String? = nil, listenAddress: String? = nil, commandTimeout: TimeAmount = .seconds(15),
  pingInterval: TimeAmount = .seconds(5), sessionBytes: Int = 256 << 20, _ body: (LiveServer) async throws -> Result
) async throws -> Result {
  let output = LiveServer.Output()
  let (addresses, continuation) = AsyncStream.makeStream(of: InspectorServer.Addresses.self)
  let server = InspectorServer(
    logPath: logPath, host: "127.0.0.1", port: 0, listenAddress: listenAddress, pollInterval: .milliseconds(200),
    commandTimeout: commandTimeout, pingInterval: pingInterval, sessionBytes: sessionBytes,
    report: { output.add($0) })
  let task = Task {
    defer { continuation.finish() }
    try await server.serve { continuation.yield($0) }
  }
  defer { task.cancel() }
  var iterator = addresses.makeAsyncIterator()
  guard let addresses = await iterator.next() else {
    try await task.value
    Issue.record("the server stopped before it listened")
    throw CancellationError()
  }
  let port = try #require(Int(addresses.page.split(separator: ":").last!.dropLast()))
  let appsPort = try #require(Int(addresses.apps.split(separator: ":").last!))
  let page = try await fetch("/", port: port).body
  let token = try #require(page.firstMatch(of: /name="flux-inspector-token" content="([0-9a-f]+)"/)?.1)
  return try await body(
    LiveServer(
      port: port, appsPort: appsPort, pairingCode: addresses.pairingCode, token: String(token), output: output))
}

/// An app on the other end of a real socket: writes lines of the live protocol and reads the
/// inspector's, with reads that give up after `patience` seconds.
final class FakeApp: @unchecked Sendable {
  private let socket: Int32
  private var buffer: [UInt8] = []
  let session: String
  /// Whether ``readLine()`` passes over the inspector's pings, which come when it sent nothing
  /// for its ping interval: a slow test does not read one for the answer it waits for.
  var skipsPings = true

  /// Connects to `port` on 127.0.0.1, from the loopback address `from` when given (any of
  /// 127.0.0.0/8), else from the one the system chooses.
  init(port: Int, session: String = UUID().uuidString, patience: Int = 10, from: String? = nil) throws {
    self.session = session
    #if canImport(Glibc)
      socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard socket >= 0 else { throw POSIXError(.EIO) }
    var timeout = timeval(tv_sec: patience, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    if let from {
      var source = sockaddr_in()
      source.sin_family = sa_family_t(AF_INET)
      source.sin_addr.s_addr = inet_addr(from)
      let bound = withUnsafePointer(to: &source) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard bound == 0 else {
        close(socket)
        throw POSIXError(.EADDRNOTAVAIL)
      }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else {
      close(socket)
      throw POSIXError(.ECONNREFUSED)
    }
  }

  deinit { close(socket) }

  /// The hello of this app, with a steerable `lists` store and a read-only `settings` one.
  func helloLine(pairing: String? = nil, next: Int = 0) -> String {
    let code = pairing.map { ",\"pairing\":\"\($0)\"" } ?? ""
    return #"{"type":"hello","protocol":1,"app":"todo","session":"\#(session)","pid":77,"platform":"Linux","#
      + #""stores":[{"label":"lists","state":"TodoListState","steerable":true},"#
      + #"{"label":"settings","state":"SettingsState","steerable":false}],"next":\#(next)\#(code)}"#
  }

  /// Says hello, and returns the inspector's answer.
  func hello(pairing: String? = nil) async -> String {
    send(helloLine(pairing: pairing))
    return await readLine() ?? ""
  }

  /// Line `n` of the log: an action of `store`.
  func line(_ n: Int, store: String = "lists", action: String = #"{"add":{"title":"Milk"}}"#, extra: String = "") {
    send(#"{"type":"line","n":\#(n),"line":\#(Fixture.line(store: store, action: action, extra: extra))}"#)
  }

  /// Writes `text` and a line break.
  func send(_ text: String) {
    sendBytes(Array((text + "\n").utf8))
  }

  func sendBytes(_ bytes: [UInt8]) {
    var done = 0
    while done < bytes.count {
      let written = bytes.withUnsafeBytes {
        Glibc.send(socket, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
      }
      if written <= 0 { return }
      done += written
    }
  }

  /// The next line the inspector sends, or `nil` when the connection ends or stays quiet.
  func readLine() async -> String? {
    while true {
      let line = try? await blocking { self.readLineBlocking() }
      if skipsPings, line == #"{"type":"ping"}"# { continue }
      return line
    }
  }

  private func readLineBlocking() -> String? {
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      if let lineBreak = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<lineBreak], as: UTF8.self)
        buffer.removeSubrange(...lineBreak)
        return line
      }
      let count = recv(socket, &chunk, chunk.count, 0)
      if count <= 0 { return nil }
      buffer.append(contentsOf: chunk[0..<count])
    }
  }

  /// Whether the inspector closed the connection: a read finds its end (not a quiet socket).
  func isClosed() async -> Bool {
    (try? await blocking {
      var chunk = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = recv(self.socket, &chunk, chunk.count, 0)
        if count == 0 { return true }
        if count < 0 { return errno == ECONNRESET }
      }
    }) ?? false
  }

  /// Closes the connection at once, as a killed app's does.
  func kill() {
    shutdown(socket, Int32(SHUT_RDWR))
  }
}

/// Sends a command as the inspector's page does, with `token`, the page's `Origin` and `Host`,
/// unless told otherwise.
func command(
  _ fields: String, port: Int, token: String?, headers: [String]? = nil
) async throws -> HTTPReply {
  let tokenField = token.map { "\"token\":\"\($0)\"," } ?? ""
  let body = "{\(tokenField)\(fields)}"
  let lines =
    (headers ?? ["Host: 127.0.0.1:\(port)", "Origin: http://127.0.0.1:\(port)", "Content-Type: application/json"])
    + ["Content-Length: \(body.utf8.count)"]
  let connection = try Connection(port: port)
  connection.send("/command", method: "POST", headers: lines, body: body)
  let text = await connection.read()
  guard let split = text.range(of: "\r\n\r\n") else { return HTTPReply(status: 0, head: text, body: "") }
  let head = String(text[..<split.lowerBound])
  let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
  return HTTPReply(status: status, head: head, body: String(text[split.upperBound...]))
}

/// Waits until `condition` holds, looking every 20 ms, for at most `seconds`.
func eventually(_ seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if try await condition() { return true }
    try? await Task.sleep(for: .milliseconds(20))
  }
  return try await condition()
}

/// The JSON object of `text`.
func object(_ text: String) -> [String: Any] {
  (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}
