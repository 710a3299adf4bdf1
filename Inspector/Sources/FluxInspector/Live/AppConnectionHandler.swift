import NIOCore

/// Reads the messages of one app's connection, on its event loop: the `hello` first, then lines,
/// gaps, stores, answers to commands and pings (see ``AppListener``).
final class AppConnectionHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  let hub: LiveHub
  /// The connection's number, once counted.
  private var number: Int?
  /// The page's number of its session, once the app said hello.
  private var session: Int?
  private var address = ""
  private var handshake: Scheduled<Void>?
  /// Whether the connection is counted as one that has not said hello yet.
  private var isHandshaking = false

  /// How long an app may take to say hello.
  static let helloLimit: TimeAmount = .seconds(10)

  init(hub: LiveHub) {
    self.hub = hub
  }

  func channelActive(context: ChannelHandlerContext) {
    address = context.remoteAddress.map(Self.describe) ?? "an unknown address"
    let number: Int
    switch hub.opened(from: address) {
    case .success(let opened): number = opened
    case .failure(let refusal):
      end(context, "refused", reason: refusal.reason)
      return
    }
    self.number = number
    isHandshaking = true
    handshake = context.eventLoop.assumeIsolated().scheduleTask(in: Self.helloLimit) { [self] in
      if session == nil {
        end(context, "refused", reason: "no hello within \(Self.helloLimit.nanoseconds / 1_000_000_000) s")
      }
    }
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    handshake?.cancel()
    endHandshake()
    if let number { hub.closed(number, session: session) }
    number = nil
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard let number, context.channel.isActive else { return }
    let buffer = unwrapInboundIn(data)
    let bytes = buffer.readableBytesView
    let message: AppMessage
    do {
      message = try AppMessage(Array(bytes)[...])
    } catch {
      end(context, "error", reason: error.message)
      return
    }
    guard let session else {
      guard message.type == "hello" else {
        end(context, "refused", reason: "the first message must be a hello, not \(message.type)")
        return
      }
      let connection = AppConnection(number: number, channel: context.channel, address: address)
      endHandshake()
      switch hub.hello(message, connection: connection) {
      case .welcome(let id, let have):
        session = id
        handshake?.cancel()
        write(context, "{\"type\":\"welcome\",\"protocol\":1,\"have\":\(have)}")
      case .refused(let reason):
        end(context, "refused", reason: reason)
      }
      return
    }
    switch message.type {
    case "line":
      guard let n = message.number("n"), n < Int(AppMessage.largestNumber), let line = message.fields["line"] else {
        end(context, "error", reason: "a line needs \"n\", a whole number, and \"line\", a line of the log")
        return
      }
      let entry =
        LogLines.entry(line, number: n + 1, isComplete: true)
        ?? "{\"line\":\(n + 1),\"error\":\"the line is empty\",\"raw\":\"\"}"
      hub.line(session: session, connection: number, n: n, entry: entry)
    case "gap":
      guard let from = message.number("from"), let count = message.number("count"), count > 0,
        from + count <= Int(AppMessage.largestNumber)
      else {
        end(context, "error", reason: "a gap needs \"from\" and \"count\", whole numbers, count at least 1")
        return
      }
      let reason = message.string("reason", limit: 32).flatMap {
        ["buffer", "paused", "disconnected"].contains($0) ? $0 : nil
      }
      hub.gap(session: session, connection: number, from: from, count: count, reason: reason ?? "other")
    case "stores":
      guard let stores = AppStore.list(message.value("stores")) else {
        end(context, "error", reason: "stores needs an array of stores, each with a \"label\"")
        return
      }
      hub.stores(session: session, connection: number, stores)
    case "ack":
      guard let id = message.number("id"), let ok = message.bool("ok") else {
        end(context, "error", reason: "an ack needs \"id\", a whole number, and \"ok\", true or false")
        return
      }
      let text = message.string(ok ? "outcome" : "error", limit: 4096) ?? (ok ? "done" : "the app gave no reason")
      hub.ack(session: session, connection: number, commandID: id, ok: ok, text: text)
    case "ping":
      write(context, "{\"type\":\"pong\"}")
    case "pong":
      break
    case "hello":
      end(context, "refused", reason: "a hello that is not the first message")
    case "error":
      hub.report(
        "the app at \(address) closed its connection: \(message.string("message", limit: 4096) ?? "no reason")")
      context.close(promise: nil)
    default:
      guard message.type.hasPrefix("x-") else {
        end(context, "error", reason: "a message of an unknown type: \(message.type)")
        return
      }
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if error is LineDecoder.TooLong {
      end(context, "error", reason: "a message longer than \(AppListener.messageLimit >> 20) MiB")
    } else {
      context.close(promise: nil)
    }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if let event = event as? IdleStateHandler.IdleStateEvent {
      if event == .read {
        // Nothing for 15 s, not even a ping: the app is gone, or its connection is half-open.
        context.close(promise: nil)
      } else if event == .write, session != nil, context.channel.isActive {
        // Nothing sent for 5 s: an app that hears nothing for 15 s takes its connection for dead.
        write(context, "{\"type\":\"ping\"}")
      }
      return
    }
    context.fireUserInboundEventTriggered(event)
  }

  /// Says once that the connection is no longer one that has not said hello.
  private func endHandshake() {
    guard isHandshaking else { return }
    isHandshaking = false
    hub.saidHello(from: address)
  }

  /// Sends `{"type":KIND,…}` with the reason, and closes the connection.
  private func end(_ context: ChannelHandlerContext, _ kind: String, reason: String) {
    guard context.channel.isActive else { return }
    let field = kind == "refused" ? "reason" : "message"
    write(context, "{\"type\":\"\(kind)\",\"\(field)\":\(JSONText.string(reason))}")
    if kind == "error" { hub.report("closed the connection of the app at \(address): \(reason)") }
    context.close(promise: nil)
  }

  private func write(_ context: ChannelHandlerContext, _ text: String) {
    var buffer = context.channel.allocator.buffer(capacity: text.utf8.count + 1)
    buffer.writeString(text)
    buffer.writeInteger(UInt8(ascii: "\n"))
    context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
  }

  private static func describe(_ address: SocketAddress) -> String {
    guard let ip = address.ipAddress else { return "\(address)" }
    let host = ip.contains(":") ? "[\(ip)]" : ip
    return "\(host):\(address.port ?? 0)"
  }
}
