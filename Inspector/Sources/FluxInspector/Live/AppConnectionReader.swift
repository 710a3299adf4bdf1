import Dispatch
import NIOCore

/// Reads the messages of one app's connection, in the order they came, on a queue of its own: the
/// `hello` first, then lines, gaps, stores, answers to commands and pings (see ``AppListener``).
///
/// Lines that came before the app closed its connection are read all the same; lines after the
/// inspector ended the connection are not.
///
/// `@unchecked Sendable`: `session`, `isHandshaking` and `isEnded`, the only properties that
/// change, are read and written on `queue` only (every instance method runs there); the others are
/// constants of `Sendable` types.
final class AppConnectionReader: @unchecked Sendable {
  let hub: LiveHub
  let channel: any Channel
  /// The connection's number.
  let number: Int
  /// The app's address, `HOST:PORT`, for messages.
  let address: String
  /// Where the connection's messages are read, one after the other.
  let queue = DispatchQueue(label: "flux-inspector.app")
  /// The page's number of its session, once the app said hello.
  private var session: Int?
  /// Whether the connection is counted as one that has not said hello yet.
  private var isHandshaking = true
  /// Whether the inspector ended the connection: what comes after is not read.
  private var isEnded = false

  init(hub: LiveHub, channel: any Channel, number: Int, address: String) {
    self.hub = hub
    self.channel = channel
    self.number = number
    self.address = address
  }

  /// No hello came in time: the connection is refused, unless the hello came meanwhile.
  func helloExpired() {
    guard session == nil else { return }
    end("refused", reason: "no hello within \(AppConnectionHandler.helloLimit.nanoseconds / 1_000_000_000) s")
  }

  /// The connection closed: after every line that came before.
  func closed() {
    endHandshake()
    hub.closed(number, session: session)
  }

  /// Sends a `ping`, once the app said hello.
  func ping() {
    if session != nil, channel.isActive { Self.write(channel, "{\"type\":\"ping\"}") }
  }

  /// Reads one line of the connection, without its line break.
  func read(_ line: ByteBuffer) {
    guard !isEnded else { return }
    let message: AppMessage
    do {
      message = try AppMessage(Array(line.readableBytesView)[...])
    } catch {
      end("error", reason: error.message)
      return
    }
    guard let session else {
      guard message.type == "hello" else {
        end("refused", reason: "the first message must be a hello, not \(message.type)")
        return
      }
      let connection = AppConnection(number: number, channel: channel, address: address)
      endHandshake()
      // Taken, and answered, on the event loop: a command that the page sends as soon as the hub
      // knows the connection is written there too, after the welcome.
      let (hub, channel) = (hub, channel)
      let greeting: LiveHub.Greeting
      do {
        greeting = try channel.eventLoop.submit {
          let greeting = hub.hello(message, connection: connection)
          if case .welcome(_, let have) = greeting {
            Self.write(channel, "{\"type\":\"welcome\",\"protocol\":1,\"have\":\(have)}")
          }
          return greeting
        }.wait()
      } catch {
        // The event loop is gone, and the connection with it.
        return
      }
      switch greeting {
      case .welcome(let id, _): session = id
      case .refused(let reason): end("refused", reason: reason)
      }
      return
    }
    switch message.type {
    case "line":
      guard let n = message.number("n"), n < Int(AppMessage.largestNumber), let line = message.fields["line"] else {
        end("error", reason: "a line needs \"n\", a whole number, and \"line\", a line of the log")
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
        end("error", reason: "a gap needs \"from\" and \"count\", whole numbers, count at least 1")
        return
      }
      let reason = message.string("reason", limit: 32).flatMap {
        ["buffer", "paused", "disconnected"].contains($0) ? $0 : nil
      }
      hub.gap(session: session, connection: number, from: from, count: count, reason: reason ?? "other")
    case "stores":
      guard let stores = AppStore.list(message.value("stores")) else {
        end("error", reason: "stores needs an array of stores, each with a \"label\"")
        return
      }
      hub.stores(session: session, connection: number, stores)
    case "ack":
      guard let id = message.number("id"), let ok = message.bool("ok") else {
        end("error", reason: "an ack needs \"id\", a whole number, and \"ok\", true or false")
        return
      }
      let text = message.string(ok ? "outcome" : "error", limit: 4096) ?? (ok ? "done" : "the app gave no reason")
      hub.ack(session: session, connection: number, commandID: id, ok: ok, text: text)
    case "ping":
      Self.write(channel, "{\"type\":\"pong\"}")
    case "pong":
      break
    case "hello":
      end("refused", reason: "a hello that is not the first message")
    case "error":
      hub.report(
        "the app at \(address) closed its connection: \(message.string("message", limit: 4096) ?? "no reason")")
      isEnded = true
      channel.close(promise: nil)
    default:
      guard message.type.hasPrefix("x-") else {
        end("error", reason: "a message of an unknown type: \(message.type)")
        return
      }
    }
  }

  /// Says once that the connection is no longer one that has not said hello.
  private func endHandshake() {
    guard isHandshaking else { return }
    isHandshaking = false
    hub.saidHello(from: address)
  }

  /// Sends `{"type":KIND,…}` with the reason, and closes the connection; an `error` is said in the
  /// server's output too.
  func end(_ kind: String, reason: String) {
    guard !isEnded else { return }
    isEnded = true
    guard channel.isActive else { return }
    if kind == "error" { hub.report("closed the connection of the app at \(address): \(reason)") }
    Self.end(channel, kind, reason: reason)
  }

  /// Sends `{"type":KIND,…}` with the reason on `channel`, and closes it.
  static func end(_ channel: any Channel, _ kind: String, reason: String) {
    let field = kind == "refused" ? "reason" : "message"
    write(channel, "{\"type\":\"\(kind)\",\"\(field)\":\(JSONText.string(reason))}")
    // Half-closed first: a socket closed whole while the app's bytes wait unread in it is reset,
    // and a reset makes the app's system drop the reason before the app reads it. What the app
    // still sends is read and ignored; the app closes its side once it has read the reason, and
    // the connection is closed whole after 2 s whatever it does.
    let promise = channel.eventLoop.makePromise(of: Void.self)
    channel.close(mode: .output, promise: promise)
    promise.futureResult.whenFailure { _ in channel.close(promise: nil) }
    channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
  }

  private static func write(_ channel: any Channel, _ text: String) {
    var buffer = channel.allocator.buffer(capacity: text.utf8.count + 1)
    buffer.writeString(text)
    buffer.writeInteger(UInt8(ascii: "\n"))
    channel.writeAndFlush(buffer, promise: nil)
  }
}
