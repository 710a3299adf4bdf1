/// The bytes of one connection, on the engine's thread: what waits to be sent, what came and is
/// not yet a whole message, and when bytes last went each way.
struct Conversation {
  private let settings: LiveSettings
  private var output: [UInt8] = []
  private var sent = 0
  private var input: [UInt8] = []
  /// Where the message being read begins in `input`, and how far `input` was searched for its end.
  private var start = 0
  private var searched = 0
  private var scratch = [UInt8](repeating: 0, count: 64 << 10)
  /// Whether a message too long was found: nothing more is read.
  private var isOverLong = false
  /// Whether the inspector closed its side after bytes that were read with its end and are not
  /// yet handled: the end is said by the next ``receive(from:)``.
  private var isAtEnd = false
  private(set) var lastSent: UInt64
  private(set) var lastReceived: UInt64

  /// The longest message, its line break included: 16 MiB.
  static let messageLimit = 16 << 20

  init(settings: LiveSettings) {
    self.settings = settings
    lastSent = Clock.now()
    lastReceived = lastSent
  }

  var hasOutput: Bool { sent < output.count }

  /// Queues `text`, a message on one line, and its line break.
  mutating func queue(_ text: String) {
    append(text, droppingLineBreak: false)
    output.append(UInt8(ascii: "\n"))
  }

  /// Appends the bytes of `text`, with one copy of its contiguous UTF-8 (a slice of its `utf8`
  /// view would be copied byte by byte, about 100 instructions each), less its last line break
  /// when asked.
  private mutating func append(_ text: String, droppingLineBreak: Bool) {
    var text = text
    text.withUTF8 { bytes in
      let count = droppingLineBreak && bytes.last == UInt8(ascii: "\n") ? bytes.count - 1 : bytes.count
      output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<count]))
    }
  }

  /// Queues a line of the log, in its envelope, or a gap.
  mutating func queue(_ outgoing: Outgoing) {
    switch outgoing {
    case .line(let n, let text):
      append("{\"type\":\"line\",\"n\":\(n),\"line\":", droppingLineBreak: false)
      append(text, droppingLineBreak: true)
      output.append(UInt8(ascii: "}"))
      output.append(UInt8(ascii: "\n"))
    case .gap(let from, let count, let reason):
      queue("{\"type\":\"gap\",\"from\":\(from),\"count\":\(count),\"reason\":\"\(reason.rawValue)\"}")
    }
  }

  /// Sends what the socket takes now.
  mutating func flush(to socket: Socket) -> Result<Void, SocketError> {
    while sent < output.count {
      let result = output.withUnsafeBytes { bytes in
        socket.send(UnsafeRawBufferPointer(rebasing: bytes[sent...]))
      }
      switch result {
      case .failure(let error): return .failure(error)
      case .success(0): return .success(())
      case .success(let count):
        sent += count
        lastSent = Clock.now()
      }
    }
    output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
    sent = 0
    return .success(())
  }

  /// Reads what is there, up to a mebibyte; returns how many bytes, or `nil` when the inspector
  /// closed its side. Bytes that came with the end are returned first, and the end by the next
  /// call: an inspector that refuses an app writes its reason and closes at once, and both are
  /// there together when the app's thread was kept from reading in between.
  mutating func receive(from socket: Socket) -> Result<Int?, SocketError> {
    guard !isOverLong else { return .success(0) }
    guard !isAtEnd else { return .success(nil) }
    var total = 0
    for _ in 0..<16 {
      let result = scratch.withUnsafeMutableBytes { socket.receive(into: $0) }
      switch result {
      case .failure(let error): return .failure(error)
      case .success(nil):
        guard total > 0 else { return .success(nil) }
        isAtEnd = true
        return .success(total)
      case .success(0): return .success(total)
      case .success(let count?):
        input.append(contentsOf: scratch[0..<count])
        total += count
        lastReceived = Clock.now()
      }
    }
    return .success(total)
  }

  /// A message read, or what is wrong with it.
  enum Message {
    case fields(JSONFields, type: String)
    case wrong(String)
  }

  /// The next whole message, if one came.
  mutating func nextMessage() -> Message? {
    guard !isOverLong else { return nil }
    guard let end = input[searched...].firstIndex(of: UInt8(ascii: "\n")) else {
      searched = input.count
      if input.count - start >= Self.messageLimit {
        isOverLong = true
        return .wrong("a message longer than 16 MiB")
      }
      compact()
      return nil
    }
    let line = Array(input[start..<end])
    start = end + 1
    searched = start
    guard line.count < Self.messageLimit else {
      isOverLong = true
      return .wrong("a message longer than 16 MiB")
    }
    let fields: JSONFields
    do {
      fields = try JSONFields(line[...])
    } catch {
      return .wrong("a message that cannot be read (\(error.message))")
    }
    guard let type = fields.string("type", limit: 64) else { return .wrong("a message without a \"type\"") }
    // Heard now: the time the thread took to read a long message is not the inspector's silence.
    lastReceived = Clock.now()
    return .fields(fields, type: type)
  }

  /// Drops the messages read from the front of `input`.
  private mutating func compact() {
    guard start > 0 else { return }
    input.removeFirst(start)
    searched -= start
    start = 0
  }
}
