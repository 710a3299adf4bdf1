import Dispatch
import NIOCore

/// Reads one app's connection on its event loop, and hands each line to an ``AppConnectionReader``
/// that reads what it says off the loop (see ``AppListener``): a line of megabytes takes a while
/// to check, seconds in a debug build, and the loop meanwhile reads the other apps it serves.
///
/// Lines wait for their reader in order; while more than ``queuedLimit`` bytes wait, the
/// connection is not read.
final class AppConnectionHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  let hub: LiveHub
  private var reader: AppConnectionReader?
  private var handshake: Scheduled<Void>?
  /// The bytes of the lines handed to the reader and not yet read.
  private var queued = 0
  /// Whether reading the connection stopped, for the lines that wait.
  private var isHeld = false
  /// Whether an error ends the connection.
  private var isEnding = false

  /// How long an app may take to say hello.
  static let helloLimit: TimeAmount = .seconds(10)
  /// The most bytes of lines that wait for their reader before the connection is no longer read.
  static let queuedLimit = 32 << 20

  init(hub: LiveHub) {
    self.hub = hub
  }

  func channelActive(context: ChannelHandlerContext) {
    let address = context.remoteAddress.map(Self.describe) ?? "an unknown address"
    switch hub.opened(from: address) {
    case .success(let number):
      let reader = AppConnectionReader(hub: hub, channel: context.channel, number: number, address: address)
      self.reader = reader
      handshake = context.eventLoop.scheduleTask(in: Self.helloLimit) {
        reader.queue.async { reader.helloExpired() }
      }
    case .failure(let refusal):
      AppConnectionReader.end(context.channel, "refused", reason: refusal.reason)
      return
    }
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    handshake?.cancel()
    // After the lines that came before it.
    if let reader { reader.queue.async { reader.closed() } }
    reader = nil
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard let reader, context.channel.isActive else { return }
    let line = unwrapInboundIn(data)
    let size = line.readableBytes
    queued += size
    if queued > Self.queuedLimit && !isHeld {
      isHeld = true
      context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
    }
    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
    let loop = context.eventLoop
    let channel = context.channel
    reader.queue.async {
      reader.read(line)
      loop.execute { handler.value.done(size, channel: channel) }
    }
  }

  /// Counts a line read; reads the connection again once few bytes wait.
  private func done(_ size: Int, channel: any Channel) {
    queued -= size
    if isHeld && !isEnding && queued <= Self.queuedLimit / 2 {
      isHeld = false
      channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    // The first error ends the connection; the decoder reports every read after it as another.
    guard !isEnding else { return }
    isEnding = true
    guard let reader else {
      context.close(promise: nil)
      return
    }
    if error is LineDecoder.TooLong {
      context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
      // After the lines that came before it.
      reader.queue.async {
        reader.end("error", reason: "a message longer than \(AppListener.messageLimit >> 20) MiB")
      }
    } else {
      context.close(promise: nil)
    }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let event = event as? IdleStateHandler.IdleStateEvent {
      if event == .read {
        // Nothing for 15 s, not even a ping: the app is gone, or its connection is half-open. Not
        // while what it sent is still being read: the app is waiting for the inspector then.
        if queued == 0 { context.close(promise: nil) }
      } else if event == .write, let reader, context.channel.isActive {
        // Nothing sent for 5 s: an app that hears nothing for 15 s takes its connection for dead.
        reader.queue.async { reader.ping() }
      }
      return
    }
    context.fireUserInboundEventTriggered(event)
  }

  private static func describe(_ address: SocketAddress) -> String {
    guard let ip = address.ipAddress else { return "\(address)" }
    let host = ip.contains(":") ? "[\(ip)]" : ip
    return "\(host):\(address.port ?? 0)"
  }
}
