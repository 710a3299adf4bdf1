import FluxInspector
import Foundation
import Testing

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
  logPath: String, _ body: (Int) async throws -> Result
) async throws -> Result {
  let (addresses, continuation) = AsyncStream.makeStream(of: String.self)
  let server = InspectorServer(logPath: logPath)
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

/// A connection to the loopback address, with reads that give up after ten seconds so that a
/// test fails instead of hanging.
/// Runs `body`, which blocks, on a thread of its own: a blocked thread of the task pool, which
/// has as many threads as the machine has cores, could be the one the server needs to answer.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}

/// Used by one test at a time.
final class Connection: @unchecked Sendable {
  private let socket: Int32
  private var buffer: [UInt8] = []

  init(port: Int) throws {
    #if canImport(Glibc)
      socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard socket >= 0 else { throw POSIXError(.EIO) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
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

  /// Sends a request for `target`, written as it is on the request line.
  func send(_ target: String, method: String = "GET") {
    let request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    _ = request.withCString { write(socket, $0, strlen($0)) }
  }

  /// Reads until `text` has come, or the connection ends or stays quiet for ten seconds.
  /// Returns everything read so far.
  @discardableResult
  func read(until text: String? = nil) async -> String {
    (try? await blocking { self.read { received in text.map { received.contains($0) } ?? false } }) ?? ""
  }

  /// Reads until the event that starts with `marker` has come whole, and returns it.
  func event(_ marker: String) async -> String {
    let received = (try? await blocking { self.read(untilEvent: marker) }) ?? ""
    guard let start = received.range(of: marker) else { return "" }
    return String(received[start.lowerBound...])
  }

  private func read(untilEvent marker: String) -> String {
    read { received in
      guard let start = received.range(of: marker) else { return false }
      return received[start.upperBound...].contains("\n\n")
    }
  }

  private func read(until isDone: (String) -> Bool) -> String {
    var chunk = [UInt8](repeating: 0, count: 65536)
    while !isDone(String(decoding: buffer, as: UTF8.self)) {
      let count = recv(socket, &chunk, chunk.count, 0)
      if count <= 0 { break }
      buffer.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: buffer, as: UTF8.self)
  }
}

/// Asks the server on `port` for `target`, and reads the whole reply.
func fetch(_ target: String, port: Int, method: String = "GET") async throws -> HTTPReply {
  let connection = try Connection(port: port)
  connection.send(target, method: method)
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
