import Foundation
import NIOCore

/// The sessions of the apps that connect: one per app session id, kept across reconnects, and
/// the commands on their way to them.
///
/// The connections (on the apps' event loop) write here, and the pages' requests read; one lock
/// guards it all, held only to copy or append, never while anything waits or writes to a socket.
final class LiveHub: @unchecked Sendable {
  /// The code an app must present, when apps connect from the network (`--listen`).
  let pairingCode: String?
  /// Says one line in the server's output: a refused app or command.
  let report: @Sendable (String) -> Void
  /// How long a command waits for its answer.
  let commandTimeout: TimeAmount
  /// The most bytes of items all sessions together keep: beyond, the session that keeps the most
  /// drops its oldest.
  let byteLimit: Int

  private let lock = NSLock()
  // Guarded by `lock`, as is every property of each session.
  private var sessions: [LiveSession] = []
  private var nextSessionID = 1
  private var nextConnectionNumber = 1
  private var connections = 0
  /// How many connections of each address have not said hello yet, when apps present a code.
  private var handshaking: [String: Int] = [:]
  private var wrongCodes: [String: (count: Int, since: Date)] = [:]
  private var allWrongCodes: (count: Int, since: Date) = (0, .distantPast)

  /// The most sessions kept: beyond, the one disconnected longest goes.
  static let sessionLimit = 32
  /// The most apps connected at once.
  static let connectionLimit = 32
  /// The most connections of one address that have not said hello yet, when apps present a code
  /// (`--listen`): so that a machine of the network without the code cannot take every place.
  static let handshakeLimit = 4
  /// The most commands waiting for an answer from one session.
  static let pendingLimit = 16
  /// The most wrong pairing codes one address may try in a minute.
  static let wrongCodeLimit = 10
  /// The most wrong pairing codes all addresses together may try in a minute: beyond, every app
  /// is refused until the minute is over, so that many addresses guess no faster than a few.
  static let allWrongCodesLimit = 100

  init(
    pairingCode: String?, commandTimeout: TimeAmount = .seconds(15), byteLimit: Int = 256 << 20,
    report: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.pairingCode = pairingCode
    self.commandTimeout = commandTimeout
    self.byteLimit = byteLimit
    self.report = report
  }

  private func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }

  // Connections.

  /// Counts a new connection from `address` (`HOST:PORT`), and returns its number, or why it is
  /// refused: too many are open, or, when apps present a code, too many of that host's have not
  /// said hello yet. A connection counted here ends its handshake with ``saidHello(from:)``.
  func opened(from address: String) -> Result<Int, Refusal> {
    let host = Self.host(of: address)
    return locked {
      guard connections < Self.connectionLimit else {
        return .failure(Refusal("the inspector has \(Self.connectionLimit) apps connected already"))
      }
      if pairingCode != nil {
        let waiting = handshaking[host, default: 0]
        guard waiting < Self.handshakeLimit else {
          return .failure(Refusal("\(waiting) connections from this address have not said hello yet"))
        }
        handshaking[host] = waiting + 1
      }
      connections += 1
      nextConnectionNumber += 1
      return .success(nextConnectionNumber)
    }
  }

  /// Says that a connection from `address`, counted by ``opened(from:)``, said hello (or closed
  /// before it did): once for each such connection.
  func saidHello(from address: String) {
    guard pairingCode != nil else { return }
    let host = Self.host(of: address)
    locked {
      let waiting = handshaking[host, default: 0]
      handshaking[host] = waiting > 1 ? waiting - 1 : nil
    }
  }

  /// Why a connection is refused.
  struct Refusal: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  /// The host of `address`, `HOST:PORT` (`[::1]:PORT` for IPv6).
  static func host(of address: String) -> String {
    address.split(separator: ":").dropLast().joined(separator: ":")
  }

  /// Counts a connection gone: its session, if it still is this connection's, is disconnected,
  /// and every command waiting for it ends.
  func closed(_ number: Int, session id: Int?) {
    let waiting: [PendingCommand] = locked {
      connections -= 1
      guard let id, let session = session(id), session.connection?.number == number else { return [] }
      session.connection = nil
      session.since = Self.now()
      session.version += 1
      let waiting = session.pending.sorted { $0.key < $1.key }.map(\.value)
      session.pending = [:]
      for command in waiting {
        session.append(Self.commandItem(command.shown, ok: false, text: Self.disconnected))
      }
      return waiting
    }
    for command in waiting {
      command.continuation.resume(returning: CommandOutcome(ok: false, text: Self.disconnected))
    }
  }

  static let disconnected = "the app disconnected before it answered"
  static let reconnected = "the app reconnected before it answered"

  /// What the inspector answers a `hello`: the session and how many of its lines it holds, or why
  /// it refuses.
  enum Greeting: Equatable {
    case welcome(session: Int, have: Int)
    case refused(String)
  }

  /// Takes the `hello` of a connection: checks its protocol and pairing code, and finds or starts
  /// its session.
  func hello(_ message: AppMessage, connection: AppConnection) -> Greeting {
    guard message.number("protocol") == 1 else {
      let version = message.fields["protocol"].map { String(decoding: $0.prefix(20), as: UTF8.self) } ?? "none"
      return .refused("this inspector speaks protocol 1, not \(version)")
    }
    if let pairingCode {
      let address = Self.host(of: connection.address)
      let refusal: String? = locked {
        let now = Date()
        if allWrongCodes.count >= Self.allWrongCodesLimit, now.timeIntervalSince(allWrongCodes.since) < 60 {
          return "too many wrong pairing codes to this inspector: wait a minute"
        }
        if let wrong = wrongCodes[address], wrong.count >= Self.wrongCodeLimit, now.timeIntervalSince(wrong.since) < 60
        {
          return "too many wrong pairing codes from this address: wait a minute"
        }
        guard let given = message.string("pairing") else { return "this inspector needs its pairing code" }
        guard Self.same(given, pairingCode) else {
          // Only the last minute counts: at most `allWrongCodesLimit` addresses are in it.
          if wrongCodes.count > 1000 { wrongCodes = wrongCodes.filter { now.timeIntervalSince($0.value.since) < 60 } }
          var wrong = wrongCodes[address] ?? (0, now)
          if now.timeIntervalSince(wrong.since) >= 60 { wrong = (0, now) }
          wrong.count += 1
          wrongCodes[address] = wrong
          if now.timeIntervalSince(allWrongCodes.since) >= 60 { allWrongCodes = (0, now) }
          allWrongCodes.count += 1
          return "the pairing code is wrong"
        }
        return nil
      }
      if let refusal {
        report("refused an app at \(connection.address): \(refusal)")
        return .refused(refusal)
      }
    }
    guard let key = message.string("session"), !key.isEmpty else {
      return .refused("a hello needs the app's \"session\" id, text of at most 256 bytes")
    }
    let app = message.string("app") ?? "app"
    let platform = message.string("platform") ?? ""
    let pid = message.number("pid") ?? 0
    let stores = AppStore.list(message.value("stores")) ?? []
    let (greeting, replaced, waiting): (Greeting, AppConnection?, [PendingCommand]) = locked {
      if let session = sessions.first(where: { $0.key == key }) {
        let replaced = session.connection
        // Commands sent on the connection it replaces are answered there or not at all.
        let waiting = session.pending.sorted { $0.key < $1.key }.map(\.value)
        session.pending = [:]
        for command in waiting {
          session.append(Self.commandItem(command.shown, ok: false, text: Self.reconnected))
        }
        session.connection = connection
        session.app = app
        session.pid = pid
        session.platform = platform
        session.stores = stores
        session.since = Self.now()
        session.version += 1
        return (.welcome(session: session.id, have: session.next), replaced, waiting)
      }
      if sessions.count >= Self.sessionLimit {
        guard let gone = sessions.firstIndex(where: { !$0.isLive }) else {
          return (.refused("the inspector holds \(Self.sessionLimit) connected apps already"), nil, [])
        }
        sessions.remove(at: gone)
      }
      let session = LiveSession(
        id: nextSessionID, key: key, app: app, pid: pid, platform: platform, stores: stores, since: Self.now())
      nextSessionID += 1
      session.connection = connection
      sessions.append(session)
      return (.welcome(session: session.id, have: 0), nil, [])
    }
    for command in waiting {
      command.continuation.resume(returning: CommandOutcome(ok: false, text: Self.reconnected))
    }
    // A reconnect while the old connection still seemed open (half-open): the old one goes.
    _ = replaced?.channel.close()
    return greeting
  }

  /// Whether two pairing codes are the same, ignoring case, spaces and dashes, in a time that
  /// does not tell how much of them matched.
  static func same(_ given: String, _ code: String) -> Bool {
    func normal(_ text: String) -> [UInt8] {
      Array(text.uppercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") })
    }
    let (a, b) = (normal(given), normal(code))
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }

  // What apps send.

  /// Adds line `n` of a session, read as `entry` (a ``LogLines`` entry): a line already held is
  /// ignored, and lines that never came before it are a gap.
  func line(session id: Int, connection: Int, n: Int, entry: String) {
    locked {
      guard let session = session(id), session.connection?.number == connection, n >= session.next else { return }
      if n > session.next { session.append(Self.gapItem(from: session.next, count: n - session.next, "missing")) }
      session.append(entry)
      session.next = n + 1
      keepWithinBytes()
    }
  }

  /// Adds a gap: lines `from` to `from + count - 1` that the app did not send.
  func gap(session id: Int, connection: Int, from: Int, count: Int, reason: String) {
    locked {
      guard let session = session(id), session.connection?.number == connection, from + count > session.next else {
        return
      }
      if from > session.next {
        session.append(Self.gapItem(from: session.next, count: from - session.next, "missing"))
      }
      let start = max(from, session.next)
      session.append(Self.gapItem(from: start, count: from + count - start, reason))
      session.next = from + count
      if reason == "paused" { session.version += 1 }
    }
  }

  /// Takes the stores an app names anew.
  func stores(session id: Int, connection: Int, _ stores: [AppStore]) {
    locked {
      guard let session = session(id), session.connection?.number == connection else { return }
      session.stores = stores
      session.version += 1
    }
  }

  /// Takes the answer to command `commandID`; an answer to no command waiting is ignored.
  func ack(session id: Int, connection: Int, commandID: Int, ok: Bool, text: String) {
    let command: PendingCommand? = locked {
      guard let session = session(id), session.connection?.number == connection,
        let command = session.pending.removeValue(forKey: commandID)
      else { return nil }
      session.append(Self.commandItem(command.shown, ok: ok, text: text))
      if ok {
        for (index, line) in command.imported.enumerated() {
          session.append("{\"imported\":\(index + 1),\"raw\":\(JSONText.string(line))}")
        }
        keepWithinBytes()
        if command.kind == "pause" { session.isPaused = true }
        if command.kind == "resume" { session.isPaused = false }
        session.version += 1
      }
      return command
    }
    command?.continuation.resume(returning: CommandOutcome(ok: ok, text: text))
  }

  // Commands.

  /// Sends `command` to its session's app, and returns the app's answer, or why there is none.
  func send(_ command: SteerCommand) async -> CommandOutcome {
    await withCheckedContinuation { continuation in
      // Decided under the lock; the refusal is answered, or the command written, after it.
      let decision: (channel: (any Channel)?, message: String, id: Int) = locked {
        if let refusal = refusal(of: command) { return (nil, refusal, 0) }
        let session = session(command.session)!
        let id = session.nextCommandID
        session.nextCommandID += 1
        session.pending[id] = PendingCommand(
          kind: command.kind, shown: command.shown(id: id), imported: command.importedLines, continuation: continuation)
        return (session.connection!.channel, command.message(id: id), id)
      }
      guard let channel = decision.channel else {
        continuation.resume(returning: CommandOutcome(ok: false, text: decision.message))
        return
      }
      let sending = (channel: channel, message: decision.message, id: decision.id)
      var buffer = sending.channel.allocator.buffer(capacity: sending.message.utf8.count + 1)
      buffer.writeString(sending.message)
      buffer.writeInteger(UInt8(ascii: "\n"))
      sending.channel.writeAndFlush(buffer, promise: nil)
      let sessionID = command.session
      let timeout = commandTimeout
      sending.channel.eventLoop.scheduleTask(in: timeout) { [self] in
        self.expire(session: sessionID, commandID: sending.id, after: timeout)
      }
    }
  }

  /// Why `command` cannot be sent now, or `nil` when it can. Under the lock.
  private func refusal(of command: SteerCommand) -> String? {
    guard let session = session(command.session) else { return "no such session" }
    if let key = command.key, key != session.key {
      return "session \(command.session) is another app's now (the inspector was started again): "
        + "the page shows its app again when it reconnects"
    }
    guard let connection = session.connection else { return "the app is not connected" }
    guard let store = session.store(command.store) else { return "the app has no store \(command.store)" }
    guard store.steerable else {
      return "the store \(command.store) is read-only: the app does not let it be steered"
    }
    if let number = command.number, number >= session.next { return "the app sent no line \(number) yet" }
    guard session.pending.count < Self.pendingLimit else {
      return "the app has \(Self.pendingLimit) commands to answer already"
    }
    guard connection.channel.isWritable else { return "the app reads no more: its connection is full" }
    return nil
  }

  /// Ends command `commandID` if it is still waiting: the app did not answer in time.
  private func expire(session id: Int, commandID: Int, after timeout: TimeAmount) {
    let text = "the app did not answer within \(timeout.nanoseconds / 1_000_000_000) s"
    let command: PendingCommand? = locked {
      guard let session = session(id), let command = session.pending.removeValue(forKey: commandID) else { return nil }
      session.append(Self.commandItem(command.shown, ok: false, text: text))
      return command
    }
    command?.continuation.resume(returning: CommandOutcome(ok: false, text: text))
  }

  // What the page reads.

  /// Every session, as JSON text: `{"file":PATH,"sessions":[…]}`, with the log file shown beside
  /// them, if any.
  func sessionsJSON(file: String?) -> String {
    let file = file.map(JSONText.string) ?? "null"
    return locked { "{\"file\":\(file),\"sessions\":[" + sessions.map(\.metaJSON).joined(separator: ",") + "]}" }
  }

  /// The session numbered `id`, whole, as JSON text: its facts, and its items from the first
  /// kept; `nil` when there is no such session.
  func document(_ id: Int) -> String? {
    // Copied under the lock (the items' text is shared, not copied); joined, up to 64 MiB, after.
    let copy: (meta: String, first: Int, end: Int, items: [String])? = locked {
      guard let session = session(id) else { return nil }
      return (session.metaJSON, session.first, session.end, Array(session.slice(from: session.first)))
    }
    guard let copy else { return nil }
    return "{\"session\":\(copy.meta),\"first\":\(copy.first),\"end\":\(copy.end),\"items\":["
      + copy.items.joined(separator: ",") + "]}"
  }

  /// The lines of the app's log that session `id` still holds, in order, as the app wrote them,
  /// and who the app is (`todo, process 123`); `nil` when there is no such session. Gaps,
  /// commands, imported lines and lines that were not JSON are left out.
  func logLines(_ id: Int) -> (lines: [String], app: String)? {
    // Copied under the lock; read after.
    let copy: (items: [String], app: String)? = locked {
      guard let session = session(id) else { return nil }
      return (Array(session.slice(from: session.first)), "\(session.app), process \(session.pid)")
    }
    guard let copy else { return nil }
    struct Item: Decodable {
      let line: Int?
      let raw: String?
      let error: String?
    }
    let decoder = JSONDecoder()
    let lines = copy.items.compactMap { item -> String? in
      guard let read = try? decoder.decode(Item.self, from: Data(item.utf8)), read.line != nil, read.error == nil
      else { return nil }
      return read.raw
    }
    return (lines, copy.app)
  }

  /// What changed in session `id` since the page had items up to `from` and facts of `version`.
  enum Update: Equatable {
    /// Nothing new.
    case none
    /// New items (as JSON text of a `session` event), from `from` to `end`, and the facts.
    case items(String, end: Int, version: Int)
    /// The items the page would need next are no longer kept, or the session is gone: the page
    /// loads the session anew.
    case reset(String)
  }

  /// The next update of session `id` for a page that holds items up to `from`, and facts of
  /// `version`: at most 2,000 items, about 4 MB.
  func update(_ id: Int, from: Int, version: Int) -> Update {
    // Copied under the lock; joined after.
    let copy: Result<(items: [String], meta: String, version: Int)?, Reset> = locked {
      guard let session = session(id) else { return .failure(Reset("the session is no longer kept")) }
      guard from >= session.first else {
        return .failure(Reset("the lines the page would show next are no longer kept"))
      }
      guard from < session.end || version != session.version else { return .success(nil) }
      let items = Array(session.slice(from: from, limit: 2000, byteLimit: 4 << 20))
      return .success((items, session.metaJSON, session.version))
    }
    switch copy {
    case .failure(let reset):
      return .reset(reset.reason)
    case .success(nil):
      return .none
    case .success(let copy?):
      let end = from + copy.items.count
      let text =
        "{\"from\":\(from),\"end\":\(end),\"session\":\(copy.meta),\"items\":[" + copy.items.joined(separator: ",")
        + "]}"
      return .items(text, end: end, version: copy.version)
    }
  }

  /// Why the page loads a session anew.
  private struct Reset: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  // Helpers, under the lock.

  /// Drops the oldest items of the session that keeps the most bytes, until all of them together
  /// keep at most ``byteLimit``: 32 sessions of 64 MiB each would be 2 GiB.
  private func keepWithinBytes() {
    var total = sessions.reduce(0) { $0 + $1.byteCount }
    while total > byteLimit, let largest = sessions.max(by: { $0.byteCount < $1.byteCount }), largest.itemCount > 1 {
      total -= largest.dropOldest()
    }
  }

  private func session(_ id: Int) -> LiveSession? {
    sessions.first { $0.id == id }
  }

  static func gapItem(from: Int, count: Int, _ reason: String) -> String {
    "{\"gap\":{\"from\":\(from),\"count\":\(count),\"reason\":\(JSONText.string(reason))},\"time\":\"\(now())\"}"
  }

  static func commandItem(_ shown: String, ok: Bool, text: String) -> String {
    let answer = CommandOutcome(ok: ok, text: text).json
    return "{\"command\":\(shown),\"ack\":\(answer),\"time\":\"\(now())\"}"
  }

  /// Now, as the log writes times.
  static func now() -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date())
  }
}
