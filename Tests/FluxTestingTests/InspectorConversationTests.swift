import Testing

@testable import FluxDevtools

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

@Suite("Inspector connection: the bytes of one connection")
struct InspectorConversationTests {
  @Test("a message that comes with the end of the connection is read before the end is taken")
  func messageBeforeTheEnd() throws {
    var ends: [Int32] = [0, 0]
    #if canImport(Darwin)
      let kind = SOCK_STREAM
    #else
      let kind = Int32(SOCK_STREAM.rawValue)
    #endif
    try #require(socketpair(AF_UNIX, kind, 0, &ends) == 0)
    defer { _ = close(ends[0]) }
    // The inspector's side refuses and closes before the app reads anything: both are waiting
    // when the app reads, as they are when the app's thread was kept off its core meanwhile.
    let refusal = Array("{\"type\":\"refused\",\"reason\":\"the pairing code is wrong\"}\n".utf8)
    try #require(refusal.withUnsafeBytes { send(ends[1], $0.baseAddress, $0.count, 0) } == refusal.count)
    _ = close(ends[1])

    var conversation = Conversation(settings: Self.settings)
    let socket = Socket(descriptor: ends[0])
    guard case .success(let count) = conversation.receive(from: socket) else {
      Issue.record("the receive failed")
      return
    }
    #expect(count == refusal.count)
    guard case .fields(let fields, let type) = conversation.nextMessage() else {
      Issue.record("the refusal was not read")
      return
    }
    #expect(type == "refused")
    #expect(fields.string("reason") == "the pairing code is wrong")
    // Then the end.
    guard case .success(nil) = conversation.receive(from: socket) else {
      Issue.record("the end of the connection was not said after its message")
      return
    }
  }

  static let settings = LiveSettings(
    host: "127.0.0.1", port: 1, pairingCode: nil, appName: "test", session: "s", pid: 1, platform: "linux",
    bufferLines: 10, bufferBytes: 1 << 20, connectTimeout: 1, handshakeTimeout: 1, pingInterval: 1,
    silenceLimit: 1, initialBackoff: 1, maximumBackoff: 1, commitTimeout: 1, report: { _ in })
}
