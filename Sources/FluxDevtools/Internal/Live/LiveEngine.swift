import FluxCore
import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What a ``LiveEngine`` needs from the steering side: the stores to name in a hello, and where
/// commands go.
struct LiveHandlers: Sendable {
  /// The stores the app offers now, as a JSON array.
  let stores: @Sendable () -> String
  /// Forgets stores that were freed; returns whether the list changed.
  let prune: @Sendable () -> Bool
  /// Takes a command message (its bytes, on one line) of connection `generation`; returns the
  /// ack to send at once when it cannot take it.
  let command: @Sendable (_ message: JSONFields, _ generation: Int) -> CommandIntake
}

/// What became of a command the inspector sent.
enum CommandIntake: Sendable {
  /// It waits for its turn; its ack comes when it is done.
  case accepted
  /// The ack to send at once: the app cannot take it now.
  case answer(String)
  /// It is not a command the protocol allows (no `id`): the connection ends, with this said.
  case wrong(String)
}

/// The socket side of an ``InspectorConnection``: a thread of its own that connects, says hello,
/// sends the lines of the buffer, reads the inspector's messages, pings, and reconnects with
/// backoff; and the buffer the log writes to, which never waits for it.
///
/// The thread does all socket work, one thing at a time, following its ``ConnectionMachine``;
/// it sleeps in `poll` on the socket and on a ``WakePipe``, which the log writes a byte to when
/// a line comes while the thread sleeps. Commands go to the steering side at once (their work
/// runs elsewhere), so the thread keeps reading and answering whatever a store does.
// `@unchecked Sendable`: every `var` below is guarded by `lock`; the thread's own state (the
// machine, the socket, the bytes in and out) lives in `run()`'s locals; `wake` and `settings`
// are constants.
final class LiveEngine: @unchecked Sendable {
  let settings: LiveSettings
  let handlers: LiveHandlers
  /// `nil` when the system gave no pipe (no file descriptor left): the engine never starts.
  private let wake: WakePipe?
  private let lock = Lock()

  // Guarded by `lock`.
  private var buffer: LineBuffer
  /// Messages that go before the lines: acks, pongs, pings, stores; with the connection they are for.
  private var control: [(text: String, generation: Int)] = []
  /// The thread sleeps in `poll` and no byte is in the pipe yet: a producer writes one.
  private var isSleeping = false
  /// `close()` was called: the thread ends, and no one writes to the pipe any more.
  private var isClosing = false
  /// The pipe is closed: nothing may be written to its descriptors.
  private var isPipeClosed = false
  /// The thread was started: it closes the pipe when it ends. Until then, ``close(timeout:)`` does.
  private var isStarted = false
  /// The socket of the connection open now, or -1: a child forked meanwhile closes its copy.
  private var socketDescriptor: Int32 = -1
  /// The stores changed since the last hello or stores message.
  private var storesChanged = false
  /// Bytes taken from the buffer are not all on the socket yet.
  private var isSending = false
  /// The connection's number: one more at each connect, so that an ack for a command of a
  /// connection that ended is not sent on the next.
  private var generation = 0
  private var published: ConnectionMachine.Phase = .connecting
  private var connections = 0
  private var refusals = 0
  private var reported: Set<String> = []
  /// Signalled when the thread has ended.
  private let ended = DispatchSemaphore(value: 0)

  init(settings: LiveSettings, handlers: LiveHandlers) {
    self.settings = settings
    self.handlers = handlers
    self.wake = WakePipe()
    self.buffer = LineBuffer(maxLines: settings.bufferLines, maxBytes: settings.bufferBytes)
    LiveEngines.shared.add(self)
  }

  deinit {
    LiveEngines.shared.remove(self)
  }

  // MARK: Fork

  /// Takes the lock before a fork (``LiveEngines``), so that no thread is inside it then.
  func lockForFork() {
    lock.lock()
  }

  /// Gives the lock back after a fork. In the child, which has no thread of the connection's,
  /// the engine is closed first: its socket and its pipe are the parent's, so the child closes its
  /// copies, and writes nothing to them; its log's lines are kept, never sent.
  func unlockAfterFork(inChild: Bool) {
    if inChild {
      isClosing = true
      isStarted = false
      isSleeping = false
      isSending = false
      published = .closed
      if socketDescriptor >= 0 {
        _ = Socket.closeDescriptor(socketDescriptor)
        socketDescriptor = -1
      }
      if !isPipeClosed, let wake {
        isPipeClosed = true
        wake.close()
      }
    }
    lock.unlock()
  }

  /// Starts the thread.
  func start() {
    guard let wake else {
      reportOnce(
        "Flux: cannot connect to the inspector: the system gives the process no pipe (no file descriptor left)")
      lock.withLock {
        isClosing = true
        isPipeClosed = true
        published = .closed
      }
      return
    }
    let mayStart: Bool = lock.withLock {
      guard !isClosing, !isStarted else { return false }
      isStarted = true
      return true
    }
    guard mayStart else { return }
    let thread = Thread { [self] in
      run(wake)
      ended.signal()
    }
    thread.name = "FluxDevtools.InspectorConnection"
    thread.start()
  }

  // MARK: What other threads call

  /// Takes a line the log wrote: kept in the buffer, or counted as not kept. Never waits for the
  /// socket; wakes the thread if it sleeps.
  func append(_ line: String) {
    lock.lock()
    _ = buffer.append(line)
    wakeIfSleeping()
    lock.unlock()
  }

  /// Queues a message for the inspector of connection `generation` (`nil`: any), before the lines.
  func send(_ message: String, generation: Int? = nil) {
    lock.lock()
    if !isClosing, generation.map({ $0 == self.generation }) ?? true {
      control.append((message, self.generation))
      wakeIfSleeping()
    }
    lock.unlock()
  }

  /// The stores changed: the thread sends them when connected.
  func noteStoresChanged() {
    lock.lock()
    storesChanged = true
    wakeIfSleeping()
    lock.unlock()
  }

  /// Stops or starts sending lines; returns how many lines written while paused a resume lets
  /// go as a gap.
  func setPaused(_ paused: Bool) -> Int {
    lock.lock()
    let count = buffer.setPaused(paused)
    wakeIfSleeping()
    lock.unlock()
    return count
  }

  /// How many lines the log has written so far: the `n` of the next.
  var lineCount: Int {
    lock.withLock { buffer.next }
  }

  /// The entries kept that hold lines from `n` to `end` (not included).
  func entries(from n: Int, until end: Int) -> [LineBuffer.Entry] {
    lock.withLock { Array(buffer.entries(from: n, until: end)) }
  }

  /// The `n` of the first line kept.
  var firstKept: Int {
    lock.withLock { buffer.first }
  }

  var phase: ConnectionMachine.Phase {
    lock.withLock { published }
  }

  var statistics: (written: Int, sent: Int, dropped: Int, paused: Int, connections: Int, refusals: Int) {
    lock.withLock {
      (buffer.next, buffer.sentLines, buffer.dropped, buffer.pausedLines, connections, refusals)
    }
  }

  /// Ends the thread: the socket closes, nothing more is attempted. Waits up to `timeout`
  /// seconds for the thread to end.
  func close(timeout: Double = 2) {
    lock.lock()
    let first = !isClosing
    isClosing = true
    let hasThread = isStarted
    if hasThread {
      wakeIfSleeping(always: true)
    } else if !isPipeClosed {
      // No thread to close the pipe and say the connection is closed: done here, once.
      isPipeClosed = true
      published = .closed
      wake?.close()
    }
    lock.unlock()
    if first, hasThread, ended.wait(timeout: .now() + timeout) == .success { ended.signal() }
  }

  /// Writes a byte to the pipe when the thread sleeps (or `always`). Under the lock, so that no
  /// byte goes to a descriptor the thread has closed (and the system may have given to another
  /// file): the thread closes the pipe under the lock too.
  private func wakeIfSleeping(always: Bool = false) {
    guard isSleeping || always, !isPipeClosed, let wake else { return }
    isSleeping = false
    wake.wake()
  }

  /// Waits until every line written so far is sent (or counted as not kept), and nothing waits to
  /// go out, for at most `timeout` seconds; `false` when the time ran out.
  func waitUntilSent(timeout: Double) -> Bool {
    let deadline = Clock.now() &+ settings.nanoseconds(timeout)
    while true {
      let done = lock.withLock { published == .connected && !buffer.hasWork && control.isEmpty && !isSending }
      if done { return true }
      if Clock.now() >= deadline || phase == .closed { return false }
      usleep(5_000)
    }
  }

  /// Says `message` once on the app's standard error (or the report of the settings), however
  /// often it happens.
  func reportOnce(_ message: String) {
    let isNew = lock.withLock {
      guard !reported.contains(message) else { return false }
      if reported.count >= 64 { reported.removeAll() }
      reported.insert(message)
      return true
    }
    if isNew { settings.report(message) }
  }

  // MARK: The thread

  private func publish(_ phase: ConnectionMachine.Phase) {
    lock.withLock { published = phase }
  }

  private var isClosingNow: Bool {
    lock.withLock { isClosing }
  }

  /// Connects, converses, backs off, again, until closed.
  private func run(_ wake: WakePipe) {
    var machine = ConnectionMachine(
      initialBackoff: settings.initialBackoff, maximumBackoff: settings.maximumBackoff)
    var unreachableSaid = false
    while !isClosingNow {
      publish(machine.phase)
      let deadline = Clock.now() &+ settings.nanoseconds(settings.connectTimeout)
      let ending: Ending
      switch Socket.connect(host: settings.host, port: settings.port, deadline: deadline, wake: wake.readEnd) {
      case .failure(let error):
        ending = isClosingNow ? .closing : .unreachable(error.description)
      case .success(let socket):
        machine.opened()
        lock.withLock {
          published = machine.phase
          socketDescriptor = socket.descriptor
        }
        ending = converse(on: socket, machine: &machine, wake)
        lock.withLock { socketDescriptor = -1 }
        socket.close()
        lock.withLock {
          buffer.isConnected = false
          generation += 1
          control.removeAll()
        }
      }
      switch ending {
      case .closing:
        break
      case .unreachable(let why):
        if !unreachableSaid {
          settings.report("Flux: cannot connect to the inspector at \(settings.address): \(why); trying again")
          unreachableSaid = true
        }
      case .refused(let why):
        lock.withLock { refusals += 1 }
        reportOnce("Flux: the inspector at \(settings.address) refused the app: \(why)")
      case .lost(let why):
        reportOnce("Flux: the connection to the inspector at \(settings.address) ended: \(why); reconnecting")
        unreachableSaid = false
      }
      if case .closing = ending { break }
      let delay = machine.ended(random: Double.random(in: 0...1), at: Clock.now())
      publish(machine.phase)
      sleep(seconds: delay, wake)
      machine.backoffElapsed()
    }
    machine.close()
    lock.lock()
    published = .closed
    isPipeClosed = true
    wake.close()
    lock.unlock()
  }

  /// Why a connection or an attempt ended.
  private enum Ending {
    case closing
    case unreachable(String)
    case refused(String)
    case lost(String)
  }

  /// Waits `seconds`, or until closed.
  private func sleep(seconds: Double, _ wake: WakePipe) {
    let deadline = Clock.now() &+ settings.nanoseconds(seconds)
    while !isClosingNow {
      let now = Clock.now()
      guard now < deadline else { return }
      var polled = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
      _ = poll(&polled, 1, Int32(min(1000, (deadline - now) / 1_000_000 + 1)))
      wake.drain()
    }
  }

  /// One connection: the hello, then lines out and messages in, until it ends.
  private func converse(on socket: Socket, machine: inout ConnectionMachine, _ wake: WakePipe) -> Ending {
    var session = Conversation(settings: settings)
    let currentGeneration = lock.withLock {
      storesChanged = false
      return generation
    }
    session.queue(hello())
    let started = Clock.now()
    var lastPrune = started
    while true {
      let now = Clock.now()
      if now &- lastPrune >= 1_000_000_000 {
        lastPrune = now
        if handlers.prune() { lock.withLock { storesChanged = true } }
      }
      if machine.phase == .connected {
        fill(&session, now: now)
      }
      if case .failure(let error) = session.flush(to: socket) { return .lost(error.description) }
      let waitsForSocket = session.hasOutput
      lock.withLock { isSending = waitsForSocket }

      // Sleep until the socket or the pipe has something, or the next look at the timers. Only a
      // connected thread with nothing to do asks to be woken for new lines: one waiting for a full
      // socket, or for a welcome, could not send them, and a wake for each would cost the log a
      // system call per line.
      var polled = [
        pollfd(fd: socket.descriptor, events: Int16(POLLIN) | (waitsForSocket ? Int16(POLLOUT) : 0), revents: 0),
        pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
      ]
      let mayWait: Bool = lock.withLock {
        guard !isClosing else { return false }
        let isConnected = machine.phase == .connected
        let hasWork = !control.isEmpty || buffer.hasWork || storesChanged
        isSleeping = isConnected && !waitsForSocket && !hasWork
        return waitsForSocket || !isConnected || !hasWork
      }
      if isClosingNow { return .closing }
      _ = poll(&polled, 2, mayWait ? Int32(settings.pollMilliseconds) : 0)
      lock.withLock { isSleeping = false }
      if polled[1].revents != 0 { wake.drain() }
      if isClosingNow { return .closing }

      // Read what came, and handle each whole message.
      let didReceive: Bool
      switch session.receive(from: socket) {
      case .failure(let error): return .lost(error.description)
      case .success(nil): return .lost("the inspector closed the connection")
      case .success(let count?): didReceive = count > 0
      }
      while let message = session.nextMessage() {
        switch message {
        case .wrong(let why):
          session.queue(Self.errorMessage(why))
          _ = session.flush(to: socket)
          return .lost("it sent \(why)")
        case .fields(let fields, let type):
          switch machine.verdict(on: type) {
          case .ignore: continue
          case .wrong(let why):
            session.queue(Self.errorMessage(why))
            _ = session.flush(to: socket)
            return .lost("it sent \(why)")
          case .handle: break
          }
          if let ending = handle(
            fields, type: type, machine: &machine, session: &session, generation: currentGeneration)
          {
            _ = session.flush(to: socket)
            return ending
          }
        }
      }

      // The timers: the welcome, and the silence of a half-open connection, counted only when
      // nothing waits to be read (the thread's own work on a long message is no silence).
      let later = Clock.now()
      if machine.phase == .handshaking, later &- started > settings.nanoseconds(settings.handshakeTimeout) {
        return .lost("no answer to the hello within \(Self.seconds(settings.handshakeTimeout))")
      }
      if !didReceive, machine.phase == .connected,
        later &- session.lastReceived > settings.nanoseconds(settings.silenceLimit)
      {
        return .lost("the inspector said nothing for \(Self.seconds(settings.silenceLimit)) (a half-open connection)")
      }
    }
  }

  /// Handles one message the machine takes; returns why the connection ends, if it does.
  private func handle(
    _ fields: JSONFields, type: String, machine: inout ConnectionMachine, session: inout Conversation, generation: Int
  ) -> Ending? {
    switch type {
    case "welcome":
      guard fields.wholeNumber("protocol") == 1 else {
        session.queue(Self.errorMessage("a welcome of another protocol than 1"))
        return .lost("its welcome is of another protocol than 1")
      }
      guard let have = fields.wholeNumber("have") else {
        session.queue(Self.errorMessage("a welcome needs \"have\", a whole number"))
        return .lost("its welcome has no \"have\"")
      }
      machine.welcomed(at: Clock.now())
      let next: Int = lock.withLock {
        buffer.isConnected = true
        buffer.rewind(to: have)
        connections += 1
        return buffer.next
      }
      if have > next {
        reportOnce(
          "Flux: the inspector at \(settings.address) holds \(have) lines of this session, which has written \(next)")
      }
      publish(machine.phase)
      return nil
    case "refused":
      return .refused(fields.string("reason", limit: 1024) ?? "no reason given")
    case "error":
      return .lost("the inspector said: \(fields.string("message", limit: 1024) ?? "an error")")
    case "ping":
      session.queue("{\"type\":\"pong\"}")
      return nil
    case "command":
      switch handlers.command(fields, generation) {
      case .accepted: return nil
      case .answer(let ack):
        session.queue(ack)
        return nil
      case .wrong(let why):
        session.queue(Self.errorMessage(why))
        return .lost("it sent \(why)")
      }
    default:
      return nil
    }
  }

  /// Adds what waits to the bytes to send: the messages before the lines, then the stores if they
  /// changed, then lines, up to a quarter of a mebibyte at a time; a ping when nothing went out
  /// for the ping interval.
  private func fill(_ session: inout Conversation, now: UInt64) {
    guard !session.hasOutput else { return }
    let (messages, lines, stores): ([String], [Outgoing], Bool) = lock.withLock {
      let messages = control.filter { $0.generation == generation }.map(\.text)
      control.removeAll()
      let stores = storesChanged
      storesChanged = false
      return (messages, buffer.take(byteLimit: 256 << 10), stores)
    }
    for message in messages { session.queue(message) }
    if stores { session.queue("{\"type\":\"stores\",\"stores\":\(handlers.stores())}") }
    for line in lines { session.queue(line) }
    if !session.hasOutput, now &- session.lastSent >= settings.nanoseconds(settings.pingInterval) {
      session.queue("{\"type\":\"ping\"}")
    }
  }

  /// The first message of a connection.
  private func hello() -> String {
    var text = "{\"type\":\"hello\",\"protocol\":1,\"app\":\(JSONText.string(settings.appName))"
    text += ",\"session\":\(JSONText.string(settings.session)),\"pid\":\(settings.pid)"
    text += ",\"platform\":\(JSONText.string(settings.platform))"
    if let code = settings.pairingCode { text += ",\"pairing\":\(JSONText.string(code))" }
    text += ",\"stores\":\(handlers.stores()),\"next\":\(lineCount)}"
    return text
  }

  static func errorMessage(_ why: String) -> String {
    "{\"type\":\"error\",\"message\":\(JSONText.string(why))}"
  }

  static func seconds(_ value: Double) -> String {
    value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
  }
}
