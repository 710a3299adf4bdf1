#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A TCP socket to the inspector, not blocking, with the few calls the connection makes: connect
/// within a time, send what the socket takes now, receive what is there.
///
/// Plain BSD sockets: no package, and no dependency on how the system's libcurl was built (on
/// Linux, FoundationNetworking's WebSocket support depends on it). Every call returns at once or
/// within the time it is given; a peer that closes, resets or never answers is an error in words,
/// never a signal (`SIGPIPE` is kept off).
struct Socket {
  let descriptor: Int32

  /// Connects to `host`:`port`, trying each address the name resolves to, until `deadline`
  /// (monotonic nanoseconds) or until `wake` is readable (the connection is closing).
  static func connect(host: String, port: Int, deadline: UInt64, wake: Int32) -> Result<Socket, SocketError> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    #if canImport(Darwin)
      hints.ai_socktype = SOCK_STREAM
    #else
      hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #endif
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
      return .failure(SocketError("cannot find \(host): \(String(cString: gai_strerror(status)))"))
    }
    defer { freeaddrinfo(first) }
    var failure = SocketError("\(host) has no address")
    var current: UnsafeMutablePointer<addrinfo>? = first
    while let address = current {
      switch attempt(address.pointee, deadline: deadline, wake: wake) {
      case .success(let socket): return .success(socket)
      case .failure(let error): failure = error
      }
      if Clock.now() >= deadline { break }
      current = address.pointee.ai_next
    }
    return .failure(failure)
  }

  private static func attempt(_ address: addrinfo, deadline: UInt64, wake: Int32) -> Result<Socket, SocketError> {
    let descriptor = socket(address.ai_family, address.ai_socktype, address.ai_protocol)
    guard descriptor >= 0 else { return .failure(SocketError(errno: errno, doing: "make a socket")) }
    let socket = Socket(descriptor: descriptor)
    socket.configure()
    if systemConnect(descriptor, address.ai_addr, address.ai_addrlen) == 0 { return .success(socket) }
    guard errno == EINPROGRESS || errno == EINTR else {
      let error = SocketError(errno: errno, doing: "connect")
      socket.close()
      return .failure(error)
    }
    while true {
      let now = Clock.now()
      guard now < deadline else {
        socket.close()
        return .failure(SocketError("no answer in time"))
      }
      var polled = [
        pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
      ]
      let timeout = Int32(min(1000, (deadline - now) / 1_000_000 + 1))
      let ready = poll(&polled, nfds_t(polled.count), timeout)
      if ready < 0 && errno != EINTR {
        let error = SocketError(errno: errno, doing: "wait for the connection")
        socket.close()
        return .failure(error)
      }
      if polled[1].revents != 0 {
        socket.close()
        return .failure(SocketError("the connection is closing"))
      }
      if polled[0].revents != 0 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        guard code == 0 else {
          socket.close()
          return .failure(SocketError(errno: code, doing: "connect"))
        }
        return .success(socket)
      }
    }
  }

  /// Not blocking; no `SIGPIPE` where the system has a socket option for it; lines go out at once.
  private func configure() {
    let flags = fcntl(descriptor, F_GETFL, 0)
    _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    var on: Int32 = 1
    #if canImport(Darwin)
      setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
    #endif
    setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
  }

  /// Sends what the socket takes now of `bytes`; returns how many it took (0 when it is full),
  /// or the error that ends the connection.
  func send(_ bytes: UnsafeRawBufferPointer) -> Result<Int, SocketError> {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return .success(0) }
    while true {
      #if canImport(Darwin)
        let sent = Darwin.send(descriptor, base, bytes.count, 0)
      #else
        let sent = Glibc.send(descriptor, base, bytes.count, Int32(MSG_NOSIGNAL))
      #endif
      if sent >= 0 { return .success(sent) }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .success(0)
      default: return .failure(SocketError(errno: errno, doing: "send"))
      }
    }
  }

  /// Receives what is there, into `buffer`, up to its size; `0` when nothing is (`.success(nil)`
  /// when the peer closed its side).
  func receive(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int?, SocketError> {
    while true {
      let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
      if count > 0 { return .success(count) }
      if count == 0 { return .success(nil) }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .success(0)
      default: return .failure(SocketError(errno: errno, doing: "receive"))
      }
    }
  }

  func close() {
    _ = Socket.closeDescriptor(descriptor)
  }

  static func closeDescriptor(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
      Darwin.close(descriptor)
    #else
      Glibc.close(descriptor)
    #endif
  }
}

// `connect` is also a method of ``Socket``: the system's, by another name.
#if canImport(Darwin)
  private func systemConnect(_ socket: Int32, _ address: UnsafePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
    Darwin.connect(socket, address, length)
  }
#else
  private func systemConnect(_ socket: Int32, _ address: UnsafePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
    Glibc.connect(socket, address, length)
  }
#endif

/// A socket call that failed, in words: "connection refused", "no answer in time".
struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }

  init(errno code: Int32, doing what: String) {
    let words: String
    switch code {
    case ECONNREFUSED: words = "nothing listens there (connection refused)"
    case ECONNRESET: words = "the inspector reset the connection"
    case EPIPE: words = "the inspector closed the connection"
    case ETIMEDOUT: words = "no answer in time"
    case EHOSTUNREACH, ENETUNREACH: words = "the address cannot be reached from here"
    case EADDRNOTAVAIL: words = "the address is not available"
    case EMFILE, ENFILE: words = "the process has no file descriptors left"
    default: words = String(cString: strerror(code))
    }
    description = "cannot \(what): \(words)"
  }
}

/// A pipe that wakes the connection's thread from `poll`: one byte written by whoever has work
/// for it, read by the thread.
struct WakePipe {
  let readEnd: Int32
  let writeEnd: Int32

  init?() {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return nil }
    for end in ends {
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL, 0) | O_NONBLOCK)
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
    }
    readEnd = ends[0]
    writeEnd = ends[1]
  }

  /// Writes one byte (a full pipe already wakes the thread).
  func wake() {
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }

  /// Reads every byte written so far.
  func drain() {
    var bytes = [UInt8](repeating: 0, count: 64)
    while read(readEnd, &bytes, bytes.count) > 0 {}
  }

  func close() {
    _ = Socket.closeDescriptor(readEnd)
    _ = Socket.closeDescriptor(writeEnd)
  }
}

/// The monotonic clock, in nanoseconds.
enum Clock {
  static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
  }
}
