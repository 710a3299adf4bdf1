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
/// as they are written; and, on a port of their own, the running apps that connect to it (see
/// ``serve(handleSignals:onListening:)``), whose sessions it shows and whose stores its page
/// steers.
///
/// ```swift
/// let server = InspectorServer(logPath: "session.jsonl")
/// try await server.run { address in print("Flux Inspector: \(address)") }
/// ```
///
/// It answers `GET` on these paths, the live sessions' paths and `POST /command` (see
/// `addLiveRoutes`), and nothing else (any other is 404, whatever `..`, `%2e` or absolute path
/// it holds: no path reaches the file system):
///
/// - `/`: the page; `/inspector.js`, `/diff.js`, `/costs.js` and `/inspector.css`: its scripts and style;
/// - `/log`: the log as ``LogDocument`` writes it, with what was written since the last request;
///   a log of more than 100,000 entries as its counts only, `"paged":true`, whose rows the page
///   asks for a page at a time:
/// - `/rows?from=P&count=N&identity=ID`: `N` rows (at most 500) from position `P` of the events
///   that pass the filters `store=`, `action=`, `outcome=` and `q=` (a text), each with its lines
///   (see ``LogRows``); the server keeps an index of the log (``LogIndex``), never its lines;
/// - `/entry?index=I&identity=ID`: the entry `I` of the log, as a row carries it (the state before
///   a row's, for its changes);
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
/// that resolves to this machine; any other is refused with 403. A command that changes a
/// running app is taken from its own page only (`PageAccess`). Its file work runs on threads of
/// its own, and the apps are read on threads of their own, never on those that answer requests
/// (rule 21).
public struct InspectorServer: Sendable {
  /// The log to serve, if any: shown as a read-only session beside the apps' live ones.
  public let logPath: String?
  /// The address to listen on: the loopback address unless told otherwise.
  public let host: String
  /// The port to listen on; 0 lets the system choose a free one.
  public let port: Int
  /// The port apps connect to; 0 lets the system choose a free one.
  public let appsPort: Int
  /// The address apps connect to from other machines (`--listen`), who must then present the
  /// pairing code; `nil` for this machine only (the loopback address), with no code.
  public let listenAddress: String?
  /// How often `/events` looks at the log's length.
  let pollInterval: Duration
  /// How long a command waits for the app's answer.
  let commandTimeout: TimeAmount
  /// How long the inspector sends nothing to an app before it sends a `ping`.
  let pingInterval: TimeAmount
  /// The most bytes the apps' sessions keep together.
  let sessionBytes: Int
  /// The most entries of a log that `/log` serves whole; a longer log is served in pages.
  let pagedEntries: Int
  /// Says a line in the server's output: a refused command or app.
  let report: @Sendable (String) -> Void

  /// Where a running server is: the page's address, the address apps connect to, and the code
  /// they must present.
  public struct Addresses: Sendable, Equatable {
    /// The page, such as `http://127.0.0.1:8080/`.
    public let page: String
    /// Where apps connect, `HOST:PORT`, as `FLUX_INSPECTOR` takes it.
    public let apps: String
    /// The code apps must present (`FLUX_INSPECTOR_PAIRING`), when they connect from the network.
    public let pairingCode: String?
  }

  /// Creates a server for the log at `logPath`, and for apps that connect.
  ///
  /// - Parameters:
  ///   - logPath: The log to serve, or `nil` for the apps' live sessions only.
  ///   - host: The address the page is served on.
  ///   - port: The page's port, or 0 for one that the system chooses.
  ///   - appsPort: The port apps connect to, or 0 for one that the system chooses.
  ///   - listenAddress: The address apps connect to from the network (they must then present the
  ///     pairing code the server makes), or `nil` for this machine only.
  public init(
    logPath: String?, host: String = "127.0.0.1", port: Int = 0, appsPort: Int = 0, listenAddress: String? = nil
  ) {
    self.init(
      logPath: logPath, host: host, port: port, appsPort: appsPort, listenAddress: listenAddress,
      pollInterval: .milliseconds(200))
  }

  init(
    logPath: String?, host: String, port: Int, appsPort: Int = 0, listenAddress: String? = nil,
    pollInterval: Duration, commandTimeout: TimeAmount = .seconds(15), pingInterval: TimeAmount = .seconds(5),
    sessionBytes: Int = 256 << 20, pagedEntries: Int = 100_000,
    report: @escaping @Sendable (String) -> Void = ServerOutput.standardError
  ) {
    precondition((0...65535).contains(port), "InspectorServer: the port \(port) is not from 0 to 65535")
    precondition((0...65535).contains(appsPort), "InspectorServer: the apps' port \(appsPort) is not from 0 to 65535")
    self.logPath = logPath
    self.host = host
    self.port = port
    self.appsPort = appsPort
    self.listenAddress = listenAddress
    self.pollInterval = pollInterval
    self.commandTimeout = commandTimeout
    self.pingInterval = pingInterval
    self.sessionBytes = sessionBytes
    self.pagedEntries = pagedEntries
    self.report = report
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
    try await serve(handleSignals: handleSignals) { onReady($0.page) }
  }

  /// Checks the log, listens for the page and for apps, calls `onListening` with where, and
  /// serves until the task is cancelled or the process gets SIGINT or SIGTERM.
  ///
  /// ```swift
  /// try await InspectorServer(logPath: nil).serve { addresses in
  ///   print("Flux Inspector: \(addresses.page)")
  ///   print("Apps connect with FLUX_INSPECTOR=\(addresses.apps)")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - handleSignals: Whether SIGINT and SIGTERM stop the server: for a program, not a test.
  ///   - onListening: Called once, with the page's address and the apps'.
  /// - Throws: An ``InspectorError`` in one line when the log cannot be read, or an address
  ///   cannot be listened on (a port in use among them).
  public func serve(handleSignals: Bool = false, onListening: @escaping @Sendable (Addresses) -> Void)
    async throws(InspectorError)
  {
    let cache: LogCache?
    if let logPath {
      try LogFile.checkReadable(path: logPath)
      cache = LogCache(path: logPath, pagedEntries: pagedEntries)
    } else {
      cache = nil
    }
    // Read the log while the page is on its way: a long one takes seconds to check.
    let warming = Task { _ = try? await cache?.document() }
    defer { warming.cancel() }
    let pairingCode = listenAddress.map { _ in Pairing.newCode() }
    let hub = LiveHub(
      pairingCode: pairingCode, commandTimeout: commandTimeout, byteLimit: sessionBytes, report: report)
    let appsHost = listenAddress ?? "127.0.0.1"
    let listener = try await AppListener.start(
      host: appsHost, port: appsPort, pingInterval: pingInterval, hub: hub)
    let appsAddress = Pairing.shownAddress(appsHost, port: listener.port)
    var logger = Logger(label: "flux-inspector")
    logger.logLevel = .critical
    let host = host
    let hosts = AllowedHosts(address: host)
    let page = PageAccess(token: Pairing.newToken(), hosts: hosts, report: report)
    let app = Application(
      router: router(cache: cache, hosts: hosts, hub: hub, page: page),
      configuration: .init(address: .hostname(host, port: port), serverName: "flux-inspector"),
      onServerRunning: { channel in
        let port = channel.localAddress?.port ?? 0
        hosts.listening(on: port)
        let shown = host.contains(":") ? "[\(host)]" : host
        onListening(Addresses(page: "http://\(shown):\(port)/", apps: appsAddress, pairingCode: pairingCode))
      },
      logger: logger
    )
    let result: Result<Void, InspectorError>
    do {
      if handleSignals {
        try await app.runService()
      } else {
        try await app.runService(gracefulShutdownSignals: [])
      }
      result = .success(())
    } catch let error as IOError {
      result = .failure(Self.describe(error, host: host, port: port))
    } catch let error as InspectorError {
      result = .failure(error)
    } catch is CancellationError {
      result = .success(())
    } catch {
      result = .failure(
        Self.describe(address: error, host: host)
          ?? InspectorError("cannot serve on \(host):\(port): the server stopped on an error it gave no words for"))
    }
    await listener.stop()
    try result.get()
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

  static func describe(_ error: IOError, host: String, port: Int, option: String = "--port") -> InspectorError {
    switch error.errnoCode {
    case EADDRINUSE:
      InspectorError("cannot listen on \(host):\(port): the port is in use; give another with \(option), or none")
    case EADDRNOTAVAIL: InspectorError("cannot listen on \(host):\(port): this machine has no such address")
    case EACCES:
      InspectorError("cannot listen on \(host):\(port): permission denied (ports below 1024 need privileges)")
    default: InspectorError("cannot listen on \(host):\(port): \(LogFile.describe(error.errnoCode))")
    }
  }

  /// The routes: these and no others.
  func router(cache: LogCache?, hosts: AllowedHosts, hub: LiveHub, page: PageAccess) -> Router<BasicRequestContext> {
    let router = Router()
    router.add(middleware: HostCheck(hosts: hosts))
    let pollInterval = pollInterval
    router.get("/") { _, _ in Self.text(page.html, type: "text/html; charset=utf-8") }
    router.get("/inspector.js") { _, _ in Self.text(InspectorPage.script, type: "text/javascript; charset=utf-8") }
    router.get("/inspector.css") { _, _ in Self.text(InspectorPage.style, type: "text/css; charset=utf-8") }
    for name in InspectorPage.helperScripts {
      router.get(RouterPath("/\(name)")) { _, _ in
        Self.text(InspectorPage.helperScript(name), type: "text/javascript; charset=utf-8")
      }
    }
    router.get("/log") { _, _ in
      guard let cache else { return Self.noLog }
      do throws(InspectorError) {
        return Self.text(try await cache.document(), type: "application/json")
      } catch {
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .serviceUnavailable)
      }
    }
    router.get("/rows") { request, _ in
      guard let cache else { return Self.noLog }
      do throws(InspectorError) {
        let query = try RowsQuery(request.uri.queryParameters)
        guard let rows = try await cache.rows(query) else { return Self.changed }
        return Self.text(rows, type: "application/json")
      } catch {
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .badRequest)
      }
    }
    router.get("/entry") { request, _ in
      guard let cache else { return Self.noLog }
      do throws(InspectorError) {
        let query = try RowsQuery(request.uri.queryParameters)
        guard let entry = try await cache.entry(query) else { return Self.changed }
        return Self.text(entry, type: "application/json")
      } catch {
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .badRequest)
      }
    }
    router.get("/session-test.swift") { _, _ in
      guard let logPath else { return Self.noLog }
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
      guard let cache else { return Self.noLog }
      let query: EventsQuery
      do throws(InspectorError) {
        query = try EventsQuery(request.uri.query)
      } catch {
        return Self.text(error.message, type: "text/plain; charset=utf-8", status: .badRequest)
      }
      return Self.eventStream { stop, send in
        try await LogEvents(path: cache.path, query: query, interval: pollInterval).send(until: stop, send)
      }
    }
    addLiveRoutes(to: router, hub: hub, page: page, logPath: logPath)
    return router
  }

  /// The answer to `/log` and `/events` when the server shows no log.
  private static var noLog: Response {
    text(
      "this inspector shows no log file: only the apps that connect", type: "text/plain; charset=utf-8",
      status: .notFound)
  }

  /// The answer to `/rows` and `/entry` when the log is not the file the page read, or has no
  /// such entry: the page loads `/log` again.
  private static var changed: Response {
    text(
      "the log changed since the page read it: load /log again", type: "text/plain; charset=utf-8",
      status: .conflict)
  }

  /// A stream of server-sent events, written by `body` until it returns, the page goes, or the
  /// server stops.
  static func eventStream(
    _ body: @escaping @Sendable (StopSignal, (String) async throws -> Void) async throws -> Void
  ) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "text/event-stream"
    headers[.cacheControl] = "no-store"
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody { writer in
        // The server stops once every response is done: this one ends when it is asked to.
        let stop = StopSignal()
        try await withGracefulShutdownHandler {
          try await body(stop) { event in try await writer.write(ByteBuffer(string: event)) }
        } onGracefulShutdown: {
          stop.raise()
        }
        try await writer.finish(nil)
      })
  }

  static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = type
    headers[.cacheControl] = "no-store"
    // The page runs its own script and style only; nothing else of the log may run. No other
    // site shows it in a frame, where a click meant for that site would steer the app.
    headers[.contentSecurityPolicy] =
      "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
    headers[.xContentTypeOptions] = "nosniff"
    headers[.xFrameOptions] = "DENY"
    return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }
}

extension HTTPField.Name {
  fileprivate static let xContentTypeOptions = Self("X-Content-Type-Options")!
  fileprivate static let xFrameOptions = Self("X-Frame-Options")!
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
