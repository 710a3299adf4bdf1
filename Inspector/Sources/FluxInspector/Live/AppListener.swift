import NIOCore
import NIOPosix

/// Where apps connect: a TCP port of its own, separate from the page's, that reads the live
/// protocol (JSON Lines; see `InspectorProtocol` in FluxDevtools' documentation) on event
/// loops of its own, so that no app, however it behaves, takes a thread that answers the page.
///
/// Every app is hostile (rule 21): a line longer than 16 MiB, one that is not UTF-8 or not a JSON
/// object with a known `type`, or a first line that is not a `hello`, is answered with an `error`
/// (or `refused`) and the connection closed; an app that says nothing for 15 seconds (a
/// half-open connection), or sends no `hello` within 10 seconds, is closed; at most 32 apps are
/// connected at once, and, when apps present a pairing code, at most 4 connections of one address
/// have not said hello yet (so that one machine without the code cannot take every place). An
/// app that was sent nothing for 5 seconds is sent a `ping`, so that an app
/// busy sending its lines, which then sends no ping of its own, hears its inspector.
final class AppListener: Sendable {
  let hub: LiveHub
  private let group: MultiThreadedEventLoopGroup
  private let channel: any Channel

  /// The largest message, its line break included.
  static let messageLimit = 16 << 20
  /// How long an app may say nothing before its connection is taken for dead.
  static let silenceLimit: TimeAmount = .seconds(15)

  /// The port it listens on.
  var port: Int { channel.localAddress?.port ?? 0 }

  private init(hub: LiveHub, group: MultiThreadedEventLoopGroup, channel: any Channel) {
    self.hub = hub
    self.group = group
    self.channel = channel
  }

  /// Listens on `host`, port `port` (0 for one the system chooses); sends a `ping` to an app that
  /// was sent nothing for `pingInterval`.
  ///
  /// - Throws: An ``InspectorError`` in words when the address cannot be listened on.
  static func start(
    host: String, port: Int, pingInterval: TimeAmount = .seconds(5), hub: LiveHub
  ) async throws(InspectorError) -> AppListener {
    // The loops only read and write: each connection's lines are checked off them, in order, by its
    // `AppConnectionReader`, so that an app that sends a line of megabytes holds up no other.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let bootstrap = ServerBootstrap(group: group)
      .serverChannelOption(.backlog, value: 64)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 20 << 20))
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(
            IdleStateHandler(readTimeout: silenceLimit, writeTimeout: pingInterval))
          try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder(limit: messageLimit)))
          try channel.pipeline.syncOperations.addHandler(AppConnectionHandler(hub: hub))
        }
      }
    do {
      let channel = try await bootstrap.bind(host: host, port: port).get()
      return AppListener(hub: hub, group: group, channel: channel)
    } catch {
      try? await group.shutdownGracefully()
      if let error = error as? IOError {
        throw InspectorServer.describe(error, host: host, port: port, option: "--apps-port")
      }
      throw InspectorServer.describe(address: error, host: host)
        ?? InspectorError("cannot listen for apps on \(host):\(port): \(error)")
    }
  }

  /// Stops listening, closes every connection, and ends the event loop.
  func stop() async {
    try? await channel.close()
    try? await group.shutdownGracefully()
  }
}

/// Cuts what an app sends into lines, each at most `limit` bytes with its line break: a longer
/// one is an error, found without waiting for its end.
struct LineDecoder: ByteToMessageDecoder {
  typealias InboundOut = ByteBuffer
  let limit: Int
  /// How many bytes at the start of the buffer hold no line break.
  private var scanned = 0

  init(limit: Int) {
    self.limit = limit
  }

  /// A line longer than the limit.
  struct TooLong: Error {}

  mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
    let view = buffer.readableBytesView
    if let lineBreak = view[(view.startIndex + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
      let length = lineBreak - view.startIndex
      guard length < limit else { throw TooLong() }
      let line = buffer.readSlice(length: length)!
      buffer.moveReaderIndex(forwardBy: 1)
      scanned = 0
      context.fireChannelRead(Self.wrapInboundOut(line))
      return .continue
    }
    scanned = view.count
    guard view.count < limit else { throw TooLong() }
    return .needMoreData
  }

  mutating func decodeLast(
    context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
  ) throws -> DecodingState {
    // A last line without its line break is not a whole message.
    buffer.moveReaderIndex(to: buffer.writerIndex)
    return .needMoreData
  }
}
