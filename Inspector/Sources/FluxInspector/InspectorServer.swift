import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The inspector's web server: the page, its script and style, the log, and the log's new lines
/// as they are written.
///
/// ```swift
/// let server = InspectorServer(logPath: "session.jsonl")
/// try await server.run { address in print("Flux Inspector: \(address)") }
/// ```
///
/// It answers `GET` on these paths, and nothing else (any other is 404, whatever
/// `..`, `%2e` or absolute path it holds: no path reaches the file system):
///
/// - `/`: the page; `/inspector.js` and `/inspector.css`: its script and style;
/// - `/log`: the log as ``LogDocument`` writes it, with what was written since the last request;
/// - `/session-test.swift`: a Swift Testing file that replays the log (``SessionTestExport``),
///   as an attachment; when no store of the log can be tested, 422 and why, in words;
/// - `/events?from=BYTE&line=N&identity=ID`: server-sent events: each `lines` event carries the
///   entries of lines written after byte `BYTE` (whose first is line `N`) of the file that `ID`
///   names (see ``LogIdentity``), as `/log` or the last event gave them, checked about five
///   times a second; a `reset` event says that the log was cut short, replaced or written over
///   (or was, before the page asked), and the page loads `/log` again. A number out of range,
///   or not a number, is refused with 400 and a message.
///
/// It answers only requests for its own address (`Host: 127.0.0.1:PORT` or `localhost:PORT`, or
/// the address it listens on), so that no other site's page can read the log through a name
/// that resolves to this machine; any other is refused with 403. Its file work runs on threads of
/// its own, never on those that answer requests (rule 21).
public struct InspectorServer: Sendable {
  /// The log to serve.
  public let logPath: String
  /// The address to listen on: the loopback address unless told otherwise.
  public let host: String
  /// The port to listen on; 0 lets the system choose a free one.
  public let port: Int
  /// How often `/events` looks at the log's length.
  let pollInterval: Duration

  /// Creates a server for the log at `logPath`.
  ///
  /// - Parameters:
  ///   - logPath: The log to serve.
  ///   - host: The address to listen on.
  ///   - port: The port, or 0 for one that the system chooses.
  public init(logPath: String, host: String = "127.0.0.1", port: Int = 0) {
    self.init(logPath: logPath, host: host, port: port, pollInterval: .milliseconds(200))
  }

  init(logPath: String, host: String, port: Int, pollInterval: Duration) {
    precondition((0...65535).contains(port), "InspectorServer: the port \(port) is not from 0 to 65535")
    self.logPath = logPath
    self.host = host
    self.port = port
    self.pollInterval = pollInterval
  }

  /// Checks the log, listens, calls `onReady` with the page's address, and serves until the task
  /// is cancelled or the process gets SIGINT or SIGTERM.
  ///
  /// - Parameters:
  ///   - handleSignals: Whether SIGINT and SIGTERM stop the server: for a program, not a test.
  ///   - onReady: Called once, with the page's address, such as `http://127.0.0.1:8080/`.
  /// - Throws: An ``InspectorError`` in one line when the log cannot be read, or the address
  ///   cannot be listened on (a port in use among them).
  public func run(handleSignals: Bool = false, onReady: @escaping @Sendable (String) -> Void)
    async throws(InspectorError)
  {
    try LogFile.checkReadable(path: logPath)
    let cache = LogCache(path: logPath)
    // Read the log while the page is on its way: a long one takes seconds to check.
    let warming = Task { _ = try? await cache.document() }
    defer { warming.cancel() }
    var logger = Logger(label: "flux-inspector")
    logger.logLevel = .critical
    let host = host
    let hosts = AllowedHosts(address: host)
    let app = Application(
      router: router(cache: cache, hosts: hosts),
      configuration: .init(address: .hostname(host, port: port), serverName: "flux-inspector"),
      onServerRunning: { channel in
        let port = channel.localAddress?.port ?? 0
        hosts.listening(on: port)
        let shown = host.contains(":") ? "[\(host)]" : host
        onReady("http://\(shown):\(port)/")
      },
      logger: logger
    )
    do {
      if handleSignals {
        try await app.runService()
      } else {
        try await app.runService(gracefulShutdownSignals: [])
      }
    } catch let error as IOError {
      throw Self.describe(error, host: host, port: port)
    } catch let error as InspectorError {
      throw error
    } catch is CancellationError {
      return
    } catch {
      throw Self.describe(address: error, host: host)
        ?? InspectorError("cannot serve on \(host):\(port): the server stopped on an error it gave no words for")
    }
  }

  /// Why `host` cannot be listened on, in words, when `error` says that it is no address.
  static func describe(address error: any Error, host: String) -> InspectorError? {
    let unknown = "no address of this machine has that name; give one such as 127.0.0.1 or ::1"
    let cause: String
    switch error {
    case is SocketAddressError.UnknownHost: cause = unknown
    case is SocketAddressError.FailedToParseIPByteBuffer: cause = "it is not an address; give one such as 127.0.0.1"
    case let error as SocketAddressError:
      switch error {
      case .failedToParseIPString: cause = "it is not an address; give one such as 127.0.0.1 or ::1"
      case .unsupported: cause = "this machine cannot listen on such an address"
      case .unixDomainSocketPathTooLong: cause = "the path is too long"
      default: cause = unknown
      }
    default: return nil
    }
    return InspectorError("cannot listen on \(host): \(cause)")
  }

  static func describe(_ error: IOError, host: String, port: Int) -> InspectorError {
    switch error.errnoCode {
    case EADDRINUSE:
      InspectorError("cannot listen on \(host):\(port): the port is in use; give another with --port, or none")
    case EADDRNOTAVAIL: InspectorError("cannot listen on \(host):\(port): this machine has no such address")
    case EACCES:
      InspectorError("cannot listen on \(host):\(port): permission denied (ports below 1024 need privileges)")
    default: InspectorError("cannot listen on \(host):\(port): \(LogFile.describe(error.errnoCode))")
    }
  }

  /// The routes: these and no others.
  func router(cache: LogCache, hosts: AllowedHosts) -> Router<BasicRequestContext> {
    let router = Router()
    router.add(middleware: HostCheck(hosts: hosts))
    let logPath = logPath
    let pollInterval = pollInterval
    router.get("/") { _, _ in Self.text(InspectorPage.html, type: "text/html; charset=utf-8") }
    router.get("/inspector.js") { _, _ in Self.text(InspectorPage.script, type: "text/javascript; charset=utf-8") }
    router.get("/inspector.css") { _, _ in Self.text(InspectorPage.style, type: "text/css; charset=utf-8") }
    router.get("/log") { _, _ in
      do throws(InspectorError) {
        return Self.text(try await cache.document(), type: "application/json")
      } catch {
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .serviceUnavailable)
      }
    }
    router.get("/session-test.swift") { _, _ in
      // Reading and checking a long log takes a while: not on a thread that answers requests.
      let test = await FileWork.run {
        Result { () throws(InspectorError) in try SessionTestExport.test(logPath: logPath) }
      }
      switch test {
      case .success(let test):
        var response = Self.text(test.text, type: "text/x-swift; charset=utf-8")
        response.headers[.contentDisposition] = "attachment; filename=\"\(SessionTestExport.downloadName)\""
        return response
      case .failure(let error):
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .unprocessableContent)
      }
    }
    router.get("/events") { request, _ in
      let query: EventsQuery
      do throws(InspectorError) {
        query = try EventsQuery(request.uri.query)
      } catch {
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .badRequest)
      }
      var headers = HTTPFields()
      headers[.contentType] = "text/event-stream"
      headers[.cacheControl] = "no-store"
      return Response(
        status: .ok, headers: headers,
        body: ResponseBody { writer in
          // The server stops once every response is done: this one ends when it is asked to.
          let stop = StopSignal()
          try await withGracefulShutdownHandler {
            try await LogEvents(path: logPath, query: query, interval: pollInterval).send(until: stop) { event in
              try await writer.write(ByteBuffer(string: event))
            }
          } onGracefulShutdown: {
            stop.raise()
          }
          try await writer.finish(nil)
        })
    }
    return router
  }

  private static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = type
    headers[.cacheControl] = "no-store"
    // The page runs its own script and style only; nothing else of the log may run.
    headers[.contentSecurityPolicy] = "default-src 'self'; style-src 'self'; img-src 'self' data:"
    headers[.xContentTypeOptions] = "nosniff"
    return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }
}

extension HTTPField.Name {
  fileprivate static let xContentTypeOptions = Self("X-Content-Type-Options")!
}

/// The events of `/events`: the lines appended to the log, read by a ``LogFollower`` on the
/// threads of file work.
struct LogEvents: Sendable {
  let path: String
  let query: EventsQuery
  let interval: Duration
  /// How often, when nothing is written, a comment checks that the page is still there.
  static let keepAlive: Duration = .seconds(5)

  /// Sends events through `send` until the task is cancelled, `stop` is raised, the page goes
  /// (`send` throws), or the log is cut short, replaced, written over or gone (a `reset` event,
  /// then the end).
  func send(until stop: StopSignal, _ send: (String) async throws -> Void) async throws {
    try await send("retry: 1000\n\n")
    let path = path
    let query = query
    var follower: LogFollower
    switch await FileWork.run({ LogFollower.resume(path: path, from: query) }) {
    case .following(let resumed): follower = resumed
    case .reset(let step):
      try await send(Self.event(step))
      return
    }
    var quiet: Duration = .zero
    while !Task.isCancelled && !stop.isRaised {
      let looking = follower
      let (looked, steps) = await FileWork.run {
        var follower = looking
        let steps = follower.look()
        return (follower, steps)
      }
      follower = looked
      for step in steps {
        try await send(Self.event(step))
        if case .reset = step { return }
        quiet = .zero
      }
      if quiet >= Self.keepAlive {
        try await send(": still here\n\n")
        quiet = .zero
      }
      try await Task.sleep(for: interval)
      quiet += interval
    }
  }

  private static func event(_ step: LogFollower.Step) -> String {
    switch step {
    case .lines(let document): "event: lines\ndata: \(document)\n\n"
    case .reset(let reason): "event: reset\ndata: \(JSONText.string(reason))\n\n"
    }
  }
}

/// A flag that one task raises and another looks at.
final class StopSignal: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var raised = false

  /// Whether ``raise()`` was called.
  var isRaised: Bool { lock.withLock { raised } }

  /// Raises the flag.
  func raise() { lock.withLock { raised = true } }
}
