import Foundation
import HTTPTypes
import Hummingbird

/// Who may change a running app: the inspector's own page, and nothing else.
///
/// A command is a `POST` that a page of any site could make a browser send to this machine. It
/// is taken only when all of these hold (rule 21), and refused with 403 otherwise, said in the
/// server's output:
///
/// - its `Host` names this server (``HostCheck``, so no DNS rebinding);
/// - its `Origin` is the page's own, `http://` and that `Host` (a browser always sends it, and
///   another site cannot forge it);
/// - its `Content-Type` is `application/json` (which another site cannot send without asking
///   first, and this server never allows);
/// - its body carries the token of this run of the server, which only the page it serves has:
///   written into that page, never into a field of a log or of an app's message.
///
/// No other site may show the page in a frame (`frame-ancestors 'none'`, `X-Frame-Options:
/// DENY`): there, a click meant for that site's own button would land on one of the page's
/// controls, and send a command that passes every check above.
struct PageAccess: Sendable {
  /// The token of this run.
  let token: String
  let hosts: AllowedHosts
  let report: @Sendable (String) -> Void

  /// The page, with the token of this run in it.
  var html: String {
    InspectorPage.html.replacingOccurrences(
      of: "<link rel=\"stylesheet\" href=\"inspector.css\">",
      with:
        "<meta name=\"flux-inspector-token\" content=\"\(token)\">\n<link rel=\"stylesheet\" href=\"inspector.css\">")
  }

  /// Why `request` may not send a command, before its body is read: `nil` when its `Origin` and
  /// `Content-Type` are the page's.
  func refusal(of request: Request) -> String? {
    let origins = request.headers[values: .origin]
    guard origins.count == 1, let origin = origins.first else {
      return origins.isEmpty ? "it has no Origin" : "it has \(origins.count) Origin headers"
    }
    guard let authority = request.head.authority, origin.lowercased() == "http://" + authority.lowercased() else {
      return "its Origin \(Self.shown(origin)) is not this inspector's page"
    }
    let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
    guard type?.lowercased() == "application/json" else {
      return "its Content-Type is \(Self.shown(type ?? "missing")), not application/json"
    }
    return nil
  }

  /// Whether `given` is the token of this run, compared in a time that does not tell how much of
  /// it matched.
  func isToken(_ given: String) -> Bool {
    let (a, b) = (Array(given.utf8), Array(token.utf8))
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }

  /// Says, in the server's output, that a command was refused and why; and returns the answer.
  func refuse(_ request: Request, _ reason: String) -> Response {
    report("refused a command to \(request.method) \(Self.shown(request.uri.path)): \(reason)")
    return InspectorServer.text(
      "refused: \(reason). Commands come from the inspector's own page only.", type: "text/plain; charset=utf-8",
      status: .forbidden)
  }

  /// A value from a request, in quotes, cut short if long, with no control characters.
  static func shown(_ value: String) -> String {
    let cut = value.count > 80 ? String(value.prefix(80)) + "…" : value
    return "\""
      + String(String.UnicodeScalarView(cut.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
      + "\""
  }
}

/// The pairing code apps present, the page's token, and the address apps are told to connect to.
enum Pairing {
  /// Letters and digits that read the same aloud and on a small screen: no 0, O, 1, I or L.
  private static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")

  /// A new pairing code, `ABCD-EFGH`: eight of 31 symbols, about 40 bits, from the system's
  /// random source. A wrong code costs a try: each address has ten a minute, and all addresses
  /// together a hundred.
  static func newCode() -> String {
    var generator = SystemRandomNumberGenerator()
    let symbols = (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] }
    return String(symbols[0..<4]) + "-" + String(symbols[4..<8])
  }

  /// A new token for the page: 128 bits from the system's random source, in hexadecimal.
  static func newToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in
      let digits = String(generator.next() as UInt32, radix: 16)
      return String(repeating: "0", count: 8 - digits.count) + digits
    }.joined()
  }

  /// `HOST:PORT` as apps are told to connect: the address listened on, or, for every address
  /// (`0.0.0.0`, `::`), one of this machine's on the network.
  static func shownAddress(_ host: String, port: Int) -> String {
    var shown = host
    if ["0.0.0.0", "::", "[::]"].contains(host) { shown = networkAddress() ?? host }
    if shown.contains(":") && !shown.hasPrefix("[") { shown = "[\(shown)]" }
    return "\(shown):\(port)"
  }

  /// This machine's first IPv4 address that is not a loopback one.
  private static func networkAddress() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return nil }
    defer { freeifaddrs(list) }
    var next: UnsafeMutablePointer<ifaddrs>? = first
    while let entry = next {
      defer { next = entry.pointee.ifa_next }
      guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
      var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
      let found = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
        var ip = pointer.pointee.sin_addr
        return inet_ntop(AF_INET, &ip, &text, socklen_t(INET_ADDRSTRLEN)) != nil
      }
      let ip = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if found && !ip.hasPrefix("127.") { return ip }
    }
    return nil
  }
}

/// Where the server says what it refused.
enum ServerOutput {
  private static let lock = NSLock()
  // Guarded by `lock`: the second of the lines said, how many were said in it, and how many were
  // left unsaid.
  nonisolated(unsafe) private static var second = 0
  nonisolated(unsafe) private static var said = 0
  nonisolated(unsafe) private static var unsaid = 0

  /// Writes `line` to standard error, `flux-inspector: ` first: at most 20 lines a second, so
  /// that a page that sends a flood of refused requests cannot flood the terminal; the lines
  /// left out are counted in the next one said. A control character (an app's words may hold
  /// the escapes that move a terminal's cursor or set its title) is written `?`.
  static let standardError: @Sendable (String) -> Void = { words in
    let line = String(
      String.UnicodeScalarView(
        words.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0 }))
    let now = Int(Date().timeIntervalSince1970)
    let text: String? = lock.withLock {
      if now != second {
        second = now
        said = 0
      }
      guard said < 20 else {
        unsaid += 1
        return nil
      }
      said += 1
      defer { unsaid = 0 }
      return unsaid > 0 ? "\(line) (and \(unsaid) more not shown)" : line
    }
    if let text { FileHandle.standardError.write(Data("flux-inspector: \(text)\n".utf8)) }
  }
}
