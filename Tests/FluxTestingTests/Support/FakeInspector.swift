import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// An inspector for the tests of the live connection: a real TCP server on the loopback, on a port
/// of its own, that speaks the protocol as the test tells it to: welcomes, refuses, never reads,
/// never answers, sends garbage or a line of 10 MB, and records every message an app sends.
final class FakeInspector: @unchecked Sendable {
  /// What it does with an app that connects.
  enum Behaviour: Sendable {
    /// Welcomes it, with `have` the lines it holds of its session; answers pings.
    case welcome
    /// Refuses its hello with this reason, and closes.
    case refuse(String)
    /// Accepts the connection, and never reads nor writes (a half-open connection, as the app sees it).
    case neverRead
    /// Reads, but never answers (no welcome, no pong).
    case neverAnswer
    /// Welcomes it, then reads at most this many bytes a second.
    case slow(bytesPerSecond: Int)
  }

  let port: Int
  private let listener: Int32
  private let lock = NSLock()
  // Guarded by `lock`.
  private var behaviour: Behaviour
  private var connections: [Int32] = []
  private var received: [[String: Any]] = []
  private var raw: [String] = []
  private var held: [String: Int] = [:]
  private var accepted = 0
  private var isStopped = false
  private var answerPings = true

  /// Listens on 127.0.0.1, on `port` (0: one the system chooses).
  init(port: Int = 0, behaviour: Behaviour = .welcome) throws {
    self.behaviour = behaviour
    let listener = socket(AF_INET, Self.streamType, 0)
    self.listener = listener
    var on: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(listener, 16) == 0 else {
      let error = String(cString: strerror(errno))
      _ = Self.closeSocket(listener)
      throw FakeInspectorError("cannot listen on port \(port): \(error)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
    }
    self.port = Int(UInt16(bigEndian: address.sin_port))
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  #if canImport(Darwin)
    static let streamType = SOCK_STREAM
  #else
    static let streamType = Int32(SOCK_STREAM.rawValue)
  #endif

  static func closeSocket(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
      Darwin.close(descriptor)
    #else
      Glibc.close(descriptor)
    #endif
  }

  func setBehaviour(_ behaviour: Behaviour) {
    lock.withLock { self.behaviour = behaviour }
  }

  func setAnswersPings(_ answers: Bool) {
    lock.withLock { answerPings = answers }
  }

  /// Every message received, in order, as objects.
  var messages: [[String: Any]] {
    lock.withLock { received }
  }

  /// The messages of a type.
  func messages(ofType type: String) -> [[String: Any]] {
    messages.filter { $0["type"] as? String == type }
  }

  /// The lines received, by `n`, as the objects the app's log wrote.
  var lines: [Int: [String: Any]] {
    var lines: [Int: [String: Any]] = [:]
    for message in messages(ofType: "line") {
      if let n = message["n"] as? Int, let line = message["line"] as? [String: Any] { lines[n] = line }
    }
    return lines
  }

  var connectionCount: Int {
    lock.withLock { accepted }
  }

  /// The connections it still reads from: one leaves once its app has closed it and everything
  /// sent on it has been read.
  var openConnections: Int {
    lock.withLock { connections.count }
  }

  /// Sends `text` and a line break to every connection.
  func send(_ text: String) {
    sendBytes(Array((text + "\n").utf8))
  }

  /// Sends `bytes` as they are to every connection.
  func sendBytes(_ bytes: [UInt8]) {
    let targets = lock.withLock { connections }
    for target in targets { Self.write(target, bytes) }
  }

  /// Says it holds `count` lines of `session`, as an inspector that kept them across a restart.
  func setHolds(_ session: String, _ count: Int) {
    lock.withLock { held[session] = count }
  }

  /// Sends a command, and returns its id.
  private var nextID = 1
  @discardableResult
  func command(_ fields: String) -> Int {
    let id = lock.withLock {
      defer { nextID += 1 }
      return nextID
    }
    send("{\"type\":\"command\",\"id\":\(id),\(fields)}")
    return id
  }

  /// The ack of command `id`, once it came (waits up to `timeout` seconds).
  func ack(_ id: Int, timeout: Double = 20) -> [String: Any]? {
    var found: [String: Any]?
    _ = waitUntil(timeout: timeout) {
      found = self.messages(ofType: "ack").first { $0["id"] as? Int == id }
      return found != nil
    }
    return found
  }

  /// Waits until `condition` holds, for at most `timeout` seconds (a bound for a test that would
  /// otherwise hang, not a measure); returns whether it held.
  @discardableResult
  func waitUntil(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if condition() { return true }
      usleep(5_000)
    }
    return condition()
  }

  /// Closes every connection at once, with a reset (as a killed process's connections end), and
  /// stops listening.
  func kill() {
    let (targets, wasStopped): ([Int32], Bool) = lock.withLock {
      defer {
        isStopped = true
        connections = []
      }
      return (connections, isStopped)
    }
    for target in targets {
      var linger = linger(l_onoff: 1, l_linger: 0)
      setsockopt(target, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
      shutdown(target, Int32(SHUT_RDWR))
    }
    if !wasStopped {
      shutdown(listener, Int32(SHUT_RDWR))
      _ = Self.closeSocket(listener)
    }
  }

  deinit {
    kill()
  }

  private func acceptLoop() {
    while true {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else {
        if errno == EINTR { continue }
        return
      }
      let behaviour: Behaviour? = lock.withLock {
        guard !isStopped else { return nil }
        accepted += 1
        connections.append(connection)
        return self.behaviour
      }
      guard let behaviour else {
        _ = Self.closeSocket(connection)
        return
      }
      let thread = Thread { [self] in serve(connection, behaviour) }
      thread.start()
    }
  }

  private func serve(_ connection: Int32, _ behaviour: Behaviour) {
    defer {
      lock.withLock { connections.removeAll { $0 == connection } }
      _ = Self.closeSocket(connection)
    }
    if case .neverRead = behaviour {
      while !lock.withLock({ isStopped || !connections.contains(connection) }) { usleep(20_000) }
      return
    }
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      var limit = chunk.count
      if case .slow(let rate) = behaviour {
        usleep(100_000)
        limit = max(1, min(chunk.count, rate / 10))
      }
      let count = recv(connection, &chunk, limit, 0)
      guard count > 0 else { return }
      buffer.append(contentsOf: chunk[0..<count])
      while let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Array(buffer[..<end])
        buffer.removeFirst(end + 1)
        guard handle(line, connection, behaviour) else { return }
      }
    }
  }

  /// Records a message and answers it; `false` to end the connection.
  private func handle(_ bytes: [UInt8], _ connection: Int32, _ behaviour: Behaviour) -> Bool {
    let text = String(decoding: bytes, as: UTF8.self)
    let message = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? ["type": "unreadable"]
    let answersPings = lock.withLock {
      received.append(message)
      raw.append(text)
      if let session = currentSession(of: connection, message) {
        switch message["type"] as? String {
        case "line":
          if let n = message["n"] as? Int, n >= held[session, default: 0] { held[session] = n + 1 }
        case "gap":
          if let from = message["from"] as? Int, let count = message["count"] as? Int {
            held[session] = max(held[session, default: 0], from + count)
          }
        default: break
        }
      }
      return answerPings
    }
    switch (message["type"] as? String, behaviour) {
    case ("hello", .refuse(let reason)):
      Self.write(connection, Array("{\"type\":\"refused\",\"reason\":\"\(reason)\"}\n".utf8))
      return false
    case ("hello", .neverAnswer):
      return true
    case ("hello", _):
      let session = message["session"] as? String ?? ""
      let have = lock.withLock {
        sessions[connection] = session
        return held[session, default: 0]
      }
      Self.write(connection, Array("{\"type\":\"welcome\",\"protocol\":1,\"have\":\(have)}\n".utf8))
    case ("ping", _) where answersPings:
      if case .neverAnswer = behaviour { return true }
      Self.write(connection, Array("{\"type\":\"pong\"}\n".utf8))
    default:
      break
    }
    return true
  }

  // Guarded by `lock`.
  private var sessions: [Int32: String] = [:]

  private func currentSession(of connection: Int32, _ message: [String: Any]) -> String? {
    sessions[connection]
  }

  /// How many lines of `session` it holds: what it would answer a hello with.
  func holds(_ session: String) -> Int {
    lock.withLock { held[session, default: 0] }
  }

  /// Forgets what it holds of every session, as an inspector started again with nothing.
  func forgetSessions() {
    lock.withLock { held = [:] }
  }

  /// One message at a time on the sockets: the test's and the answers of the connections' threads.
  private static let writing = NSLock()

  static func write(_ connection: Int32, _ bytes: [UInt8]) {
    writing.lock()
    defer { writing.unlock() }
    var offset = 0
    while offset < bytes.count {
      let sent = bytes[offset...].withUnsafeBytes { pointer in
        #if canImport(Darwin)
          Darwin.send(connection, pointer.baseAddress, pointer.count, 0)
        #else
          Glibc.send(connection, pointer.baseAddress, pointer.count, Int32(MSG_NOSIGNAL))
        #endif
      }
      guard sent > 0 else { return }
      offset += sent
    }
  }
}

struct FakeInspectorError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}
