import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Everything a ``LiveEngine`` is told: where the inspector is, who the app is, the limits of its
/// buffer, and the times of the protocol.
struct LiveSettings: Sendable {
  let host: String
  let port: Int
  let pairingCode: String?
  let appName: String
  /// The same for every reconnect of this connection, so that the inspector continues its session.
  let session: String
  let pid: Int
  let platform: String
  let bufferLines: Int
  let bufferBytes: Int
  let connectTimeout: Double
  let handshakeTimeout: Double
  let pingInterval: Double
  let silenceLimit: Double
  let initialBackoff: Double
  let maximumBackoff: Double
  let commitTimeout: Double
  let report: @Sendable (String) -> Void

  /// `HOST:PORT`, with an IPv6 address in brackets, as messages name the inspector.
  var address: String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
  }

  /// How long the thread sleeps at most between two looks at its timers, in milliseconds.
  var pollMilliseconds: Int {
    Int(max(1, min(1000, min(pingInterval, silenceLimit, handshakeTimeout) * 250)))
  }

  /// `seconds` in nanoseconds, bounded (a setting from outside never overflows).
  func nanoseconds(_ seconds: Double) -> UInt64 {
    guard seconds.isFinite, seconds > 0 else { return 0 }
    return seconds >= 1e9 ? UInt64(1e18) : UInt64(seconds * 1e9)
  }

  /// The platform the app runs on, as the hello names it.
  static var currentPlatform: String {
    #if os(macOS)
      "macOS"
    #elseif os(iOS)
      "iOS"
    #elseif os(tvOS)
      "tvOS"
    #elseif os(watchOS)
      "watchOS"
    #elseif os(visionOS)
      "visionOS"
    #elseif os(Linux)
      "Linux"
    #elseif os(Windows)
      "Windows"
    #else
      "unknown"
    #endif
  }
}

/// What the environment says of the inspector: `FLUX_INSPECTOR=HOST:PORT` and
/// `FLUX_INSPECTOR_PAIRING=CODE`.
enum InspectorEnvironment {
  /// Where the inspector is, if the environment says so; a message when it says so wrongly.
  enum Reading: Equatable {
    case none
    case address(host: String, port: Int, pairingCode: String?)
    case malformed(String)
  }

  static func read(_ environment: [String: String]) -> Reading {
    let value = environment["FLUX_INSPECTOR"]
    let code = environment["FLUX_INSPECTOR_PAIRING"]
    guard let value else {
      return code == nil
        ? .none : .malformed("FLUX_INSPECTOR_PAIRING is set, but FLUX_INSPECTOR is not: expected HOST:PORT")
    }
    guard let (host, port) = address(value) else {
      let shown = value.count > 80 ? String(value.prefix(80)) + "…" : value
      return .malformed("FLUX_INSPECTOR: \(JSONText.string(shown)) is not an address: expected HOST:PORT")
    }
    if let code, code.isEmpty || code.utf8.count > 256 {
      return .malformed("FLUX_INSPECTOR_PAIRING: expected the code the inspector printed")
    }
    return .address(host: host, port: port, pairingCode: code)
  }

  /// `HOST:PORT` (`[IPv6]:PORT` for an IPv6 address), with a port from 1 to 65535.
  static func address(_ text: String) -> (host: String, port: Int)? {
    let text = text.trimmingCharacters(in: .whitespaces)
    let host: Substring
    let port: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
      host = text[text.index(after: text.startIndex)..<close]
      port = text[text.index(close, offsetBy: 2)...]
    } else {
      guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
      host = text[..<colon]
      port = text[text.index(after: colon)...]
    }
    guard !host.isEmpty, host.utf8.count <= 253,
      host.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "/" }),
      (1...5).contains(port.count), port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber),
      let number = Int(port), (1...65535).contains(number)
    else { return nil }
    return (String(host), number)
  }
}
