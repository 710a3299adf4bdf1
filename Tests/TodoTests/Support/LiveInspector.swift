import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A stand-in for `flux-inspector` in the tests of `todo` connected live: a TCP server on the
/// loopback that welcomes an app, keeps what it sends, and sends it commands.
final class LiveInspector: @unchecked Sendable {
  let port: Int
  private let listener: Int32
  private let lock = NSLock()
  // Guarded by `lock`.
  private var connections: [Int32] = []
  private var received: [[String: Any]] = []
  private var nextID = 1
  private var isStopped = false

  init(port: Int = 0) throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
    guard bound == 0, listen(listener, 8) == 0 else {
      close(listener)
      throw FaultError("cannot listen on port \(port)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
    }
    self.port = Int(UInt16(bigEndian: address.sin_port))
    Thread { [self] in accepting() }.start()
  }

  var messages: [[String: Any]] { lock.withLock { received } }

  func messages(ofType type: String) -> [[String: Any]] {
    messages.filter { $0["type"] as? String == type }
  }

  /// The lines received, by `n`.
  var lines: [Int: [String: Any]] {
    var lines: [Int: [String: Any]] = [:]
    for message in messages(ofType: "line") {
      if let n = message["n"] as? Int, let line = message["line"] as? [String: Any] { lines[n] = line }
    }
    return lines
  }

  /// Sends a command and returns its ack, or `nil` if none came within a minute.
  func command(_ fields: String) -> [String: Any]? {
    let id = lock.withLock {
      defer { nextID += 1 }
      return nextID
    }
    let bytes = Array("{\"type\":\"command\",\"id\":\(id),\(fields)}\n".utf8)
    for connection in lock.withLock({ connections }) { _ = send(connection, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }
    var ack: [String: Any]?
    _ = waitUntil {
      ack = self.messages(ofType: "ack").first { $0["id"] as? Int == id }
      return ack != nil
    }
    return ack
  }

  /// Waits until `condition` holds, a minute at most (a bound for a test that would hang, not a
  /// measure).
  func waitUntil(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      if condition() { return true }
      usleep(10_000)
    }
    return condition()
  }

  /// Ends every connection with a reset and stops listening, as a process killed with -9 does.
  func kill() {
    let targets: [Int32] = lock.withLock {
      defer {
        connections = []
        isStopped = true
      }
      return connections
    }
    for target in targets {
      var linger = linger(l_onoff: 1, l_linger: 0)
      setsockopt(target, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
      shutdown(target, Int32(SHUT_RDWR))
    }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }

  private func accepting() {
    while true {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { return }
      let isTaken = lock.withLock {
        guard !isStopped else { return false }
        connections.append(connection)
        return true
      }
      guard isTaken else {
        close(connection)
        return
      }
      Thread { [self] in serve(connection) }.start()
    }
  }

  private func serve(_ connection: Int32) {
    defer { close(connection) }
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = recv(connection, &chunk, chunk.count, 0)
      guard count > 0 else { return }
      buffer.append(contentsOf: chunk[0..<count])
      while let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Data(buffer[..<end])
        buffer.removeFirst(end + 1)
        let message = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] ?? [:]
        lock.withLock { received.append(message) }
        let answer: String? =
          switch message["type"] as? String {
          case "hello": "{\"type\":\"welcome\",\"protocol\":1,\"have\":0}\n"
          case "ping": "{\"type\":\"pong\"}\n"
          default: nil
          }
        if let answer { _ = send(connection, answer, answer.utf8.count, Int32(MSG_NOSIGNAL)) }
      }
    }
  }
}
