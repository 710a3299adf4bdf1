import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Answers only the requests that name this server in their `Host` header: `127.0.0.1:PORT`,
/// `localhost:PORT` or `[::1]:PORT`, and the address it listens on when told another one. Any
/// other is refused with 403 and a message.
///
/// A page on another site can make its own name resolve to 127.0.0.1 (DNS rebinding): its
/// requests then reach this server with that name in their `Host`, and would read the log.
/// A browser always sends the name that it resolved, so such a request never names this server.
/// Listening on every address (`0.0.0.0` or `::`), the server answers a `Host` that is an IP
/// address (no name to rebind) with its port too.
struct HostCheck<Context: RequestContext>: RouterMiddleware {
  let hosts: AllowedHosts

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let extra = request.headers[values: HTTPField.Name("Host")!]
    if extra.isEmpty, let authority = request.head.authority, hosts.allows(authority) {
      return try await next(request, context)
    }
    var headers = HTTPFields()
    headers[.contentType] = "text/plain; charset=utf-8"
    headers[.cacheControl] = "no-store"
    headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
    let message =
      "this server answers requests for \(hosts.shown) only: open the address that flux-inspector printed"
    return Response(status: .forbidden, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message)))
  }
}

/// The `Host` values that name this server, known once it listens (its port may be the one the
/// system chose).
final class AllowedHosts: @unchecked Sendable {
  /// The address it listens on, as given.
  let address: String
  private let lock = NSLock()
  // Guarded by `lock`: the only stored property that changes.
  private var listeningPort = 0

  init(address: String) {
    self.address = address.lowercased()
  }

  /// Says which port the server listens on.
  func listening(on port: Int) { lock.withLock { listeningPort = port } }

  private var port: Int { lock.withLock { listeningPort } }

  /// The page's addresses, for a message.
  var shown: String {
    let port = port
    return "127.0.0.1:\(port) or localhost:\(port)" + (isLoopback ? "" : " or \(Self.bracketed(address)):\(port)")
  }

  private var isLoopback: Bool { ["127.0.0.1", "localhost", "::1"].contains(address) }

  private var isEveryAddress: Bool { ["0.0.0.0", "::", "[::]"].contains(address) }

  /// Whether `authority`, from a request's `Host`, names this server.
  func allows(_ authority: String) -> Bool {
    let port = port
    guard port > 0 else { return false }
    let authority = authority.lowercased()
    let host: Substring
    if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
      guard authority[authority.index(after: colon)...] == "\(port)" else { return false }
      host = authority[..<colon]
    } else {
      // A browser leaves out the port only when it is the default one.
      guard port == 80 else { return false }
      host = authority[...]
    }
    if ["127.0.0.1", "localhost", "[::1]", Self.bracketed(address)].contains(String(host)) { return true }
    return isEveryAddress && Self.isAddress(host)
  }

  /// An IPv6 address in brackets, as a `Host` writes it.
  private static func bracketed(_ address: String) -> String {
    address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
  }

  /// Whether `host` is an IP address (`192.168.1.5`, `[fe80::1]`), not a name.
  private static func isAddress(_ host: Substring) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    if host.hasPrefix("[") && host.hasSuffix("]") {
      return inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &v6) == 1
    }
    return inet_pton(AF_INET, String(host), &v4) == 1
  }
}
