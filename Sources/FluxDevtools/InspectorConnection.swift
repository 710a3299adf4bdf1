import FluxCore
import Foundation

/// A live connection from a running app to the Flux Inspector: the app's action log, streamed as
/// it is written, and commands from the inspector's page to the stores the app lets it steer.
///
/// Nothing is attempted unless the app is told where the inspector is: in code, or by the
/// environment (`FLUX_INSPECTOR=HOST:PORT`, and `FLUX_INSPECTOR_PAIRING=CODE` when the inspector
/// asks for its pairing code):
///
/// ```swift
/// let inspector = InspectorConnection.fromEnvironment(appName: "Todo")  // nil when not set
/// let store = Store<TodoListState>(
///   state: .init(), mutations: .init(), executor: .mainThread,
///   middlewares: inspector.map { [$0.log.middleware(label: "lists", snapshots: .snapshot)] } ?? [])
/// inspector?.steer(store, label: "lists", mutations: .init(), scratch: { TodoListState() })
/// ```
///
/// The connection's ``log`` is an ``ActionLog`` like any other: give its middleware to each store
/// to show. Its lines go to a bounded buffer, and from there to the inspector, on a thread of the
/// connection's own; a commit never waits for the network. When the lines not yet sent fill the
/// buffer (the inspector is slow, or not there), new lines are counted and dropped, and the
/// inspector shows them as a gap ("412 actions not sent"). The connection reconnects by itself
/// with a backoff (0.1 s, doubling to 5 s, with jitter), continues its session where the
/// inspector left it, pings an inspector that says nothing, and takes one that goes silent for 15
/// seconds for gone.
///
/// A store is steerable only when the app says so, with ``steer(_:label:mutations:scratch:)``:
/// the page may then jump it to the state after any of its actions, bring it back to the
/// present, skip and unskip an action, dispatch an action typed as JSON, and import a session.
/// Each command is dispatched to the store as an action, committed on its executor like any
/// other, and its line in the log says so (`"steered":"jump"`). Other stores are read-only
/// (``offer(_:label:)`` names them to the inspector). The protocol and what each command does
/// are in <doc:InspectorProtocol>; how to reach the inspector from a simulator or a device, in
/// <doc:InspectingARunningApp>.
///
/// > Important: Thread-safe. The connection's thread does all socket work; commands run one at
/// > a time, in order, on a task of their own, and wait for their store's executor, never the
/// > other way round. A store on the main thread takes a command when the main queue runs: a
/// > program that blocks its main thread (reading standard input on it, say) takes none until it
/// > stops blocking. Keep the connection for as long as the app should be inspected: freeing it,
/// > or ``close()``, ends it.
public final class InspectorConnection: Sendable {
  /// The log whose lines go to the inspector: give its middleware to each store to show.
  ///
  /// It writes the ``Options/fields`` asked for (all by default), and lines of commits that a
  /// command caused say which (`"steered"`). Give a steerable store its middleware with
  /// snapshots (``StateSnapshots/snapshot``): the recorded states are what a jump shows, and
  /// where the work of a skip or of the present starts from.
  public let log: ActionLog
  /// Where the inspector is: `HOST:PORT`.
  public let address: String
  /// The session this process is to the inspector: the same for every reconnect.
  public let session: String
  private let engine: LiveEngine
  private let registry: SteeringRegistry

  /// Connects to the inspector at `host`:`port`, at once and again whenever the connection ends,
  /// until ``close()``.
  ///
  /// - Parameters:
  ///   - host: The inspector's host: `127.0.0.1` on this machine or a simulator, the Mac's address
  ///     on the local network from a device.
  ///   - port: The port the inspector takes apps on (it prints it: `FLUX_INSPECTOR=HOST:PORT`).
  ///   - pairingCode: The code the inspector printed, when it listens on the network (`--listen`).
  ///   - appName: The app's name, as the page shows it; the process's name by default.
  ///   - options: The buffer's limits, the fields of the log, the protocol's times, and where
  ///     messages go.
  public init(
    host: String, port: Int, pairingCode: String? = nil, appName: String? = nil, options: Options = Options()
  ) {
    let marks = SteeringMarks()
    let registry = SteeringRegistry(onCommand: options.onCommand)
    let session = UUID().uuidString
    let settings = LiveSettings(
      host: host, port: min(max(port, 0), 65535), pairingCode: pairingCode,
      appName: appName ?? ProcessInfo.processInfo.processName, session: session, pid: Int(getpid()),
      platform: LiveSettings.currentPlatform, bufferLines: options.bufferLines, bufferBytes: options.bufferBytes,
      connectTimeout: options.connectTimeout, handshakeTimeout: options.handshakeTimeout,
      pingInterval: options.pingInterval, silenceLimit: options.silenceLimit, initialBackoff: options.initialBackoff,
      maximumBackoff: options.maximumBackoff, commitTimeout: options.commitTimeout, report: options.report)
    let engine = LiveEngine(
      settings: settings,
      handlers: LiveHandlers(
        stores: { [weak registry] in registry?.storesJSON() ?? "[]" },
        prune: { [weak registry] in registry?.prune() ?? false },
        command: { [weak registry] fields, generation in
          registry?.take(fields, generation: generation) ?? .answer("{\"type\":\"error\",\"message\":\"closing\"}")
        }))
    let log = ActionLog(output: ActionLogOutput { engine.append($0) }, fields: options.fields, marks: marks)
    registry.attach(SteeringContext(engine: engine, log: log, marks: marks, commitTimeout: options.commitTimeout))
    self.log = log
    self.address = settings.address
    self.session = session
    self.engine = engine
    self.registry = registry
    if !(1...65535).contains(port) {
      engine.reportOnce("Flux: the inspector's port \(port) is not a port (1 to 65535): no connection is made")
      engine.close(timeout: 0)
    } else {
      engine.start()
    }
  }

  /// A connection to the inspector the environment names, or `nil` when it names none.
  ///
  /// `FLUX_INSPECTOR=HOST:PORT` (`[IPv6]:PORT` for an IPv6 address) says where the inspector is;
  /// `FLUX_INSPECTOR_PAIRING=CODE` gives its pairing code. With neither set, the app makes no
  /// connection and pays nothing. A value that is not an address is said once on standard error
  /// (`FLUX_INSPECTOR: "…" is not an address: expected HOST:PORT`), and ignored: it never stops
  /// the app.
  ///
  /// ```swift
  /// let inspector = InspectorConnection.fromEnvironment(appName: "todo")
  /// ```
  ///
  /// - Parameters:
  ///   - appName: The app's name, as the page shows it; the process's name by default.
  ///   - environment: Where to read the variables: the process's environment by default.
  ///   - options: As for ``init(host:port:pairingCode:appName:options:)``.
  /// - Returns: The connection, or `nil` when the environment names no inspector, or names it
  ///   wrongly.
  public static func fromEnvironment(
    appName: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
    options: Options = Options()
  ) -> InspectorConnection? {
    switch InspectorEnvironment.read(environment) {
    case .none:
      return nil
    case .malformed(let message):
      if saidLock.withLock({ said.insert(message).inserted }) { options.report("Flux: " + message) }
      return nil
    case .address(let host, let port, let code):
      return InspectorConnection(host: host, port: port, pairingCode: code, appName: appName, options: options)
    }
  }

  /// The messages about the environment said so far, so that each is said once per process.
  private static let saidLock = Lock()
  // Guarded by `saidLock`.
  nonisolated(unsafe) private static var said: Set<String> = []

  deinit {
    engine.close(timeout: 0)
    registry.close()
  }

  /// Lets the inspector steer `store`: jump it to any state, bring it back to the present, skip
  /// and unskip its actions, dispatch an action typed as JSON, import a session.
  ///
  /// Give the store the middleware of ``log``, labelled `label`, with snapshots:
  ///
  /// ```swift
  /// let store = Store<TodoListState>(
  ///   state: .init(), mutations: .init(), executor: .mainThread,
  ///   middlewares: [inspector.log.middleware(label: "lists", snapshots: .snapshot)])
  /// inspector.steer(store, label: "lists", mutations: TodoMutations(), scratch: { TodoListState() })
  /// ```
  ///
  /// Call it before the store commits its first action: the state the store has now is where the
  /// work of a skip or of the present may start. The connection holds the store weakly: when it is
  /// freed, the inspector is told it is gone. A store offered again under the same label takes
  /// the place of the first: the store's timeline starts after the lines of every action that
  /// ended before the call (it waits for them, as ``ActionLog/flush()`` does), so none of the
  /// first store's lines is in it, even one still on the log's queue.
  ///
  /// What a command needs: the state's ``Snapshotting/restore(_:)`` action, by which the store
  /// takes a state (committed like any action, through its middleware); `Codable` actions, to read
  /// them from the log and from the page; the mutations, and a fresh state to run them on
  /// (`scratch`), to work out a state the log did not record, on the connection's queue, never on
  /// the store. So the mutations must be the store's, and do nothing but change the state they are
  /// given (no dispatch, no other side effect).
  ///
  /// - Parameters:
  ///   - store: The store to steer.
  ///   - label: The label its log middleware writes.
  ///   - mutations: The store's mutations.
  ///   - scratch: Makes a fresh state, as a new store of this kind would begin.
  public func steer<State: Snapshotting>(
    _ store: Store<State>, label: String, mutations: State.Mutations, scratch: @escaping @Sendable () -> State
  ) where State.Action: Codable {
    // The log writes on its own queue, and a line may wait there a while: the lines of the actions
    // that ended before are numbered first, so that the timeline starts after them.
    log.flush()
    registry.offer(
      SteeredStore(store, label: label, mutations: mutations, makeState: scratch, start: engine.lineCount))
  }

  /// Names `store` to the inspector, read-only: the page shows its lines and states, with no
  /// controls. Give the store the middleware of ``log``, labelled `label`.
  ///
  /// Any store can be offered so, whatever its state: one whose state is not `Codable` (and so
  /// cannot be ``steer(_:label:mutations:scratch:)``ed) shows its states when its middleware
  /// writes them through `Mirror`:
  ///
  /// ```swift
  /// let player = Store<PlayerState>(
  ///   state: .init(), mutations: .init(), executor: .mainThread,
  ///   middlewares: [connection.log.middleware(label: "player", snapshots: .mirror)])
  /// connection.offer(player, label: "player")
  /// ```
  ///
  /// - Parameters:
  ///   - store: The store to show.
  ///   - label: The label its log middleware writes.
  public func offer<State: FluxCore.State>(_ store: Store<State>, label: String) {
    registry.offer(ReadOnlyStore(store, label: label))
  }

  /// Where the connection is: connecting, shaking hands, connected, waiting to reconnect, closed.
  public var phase: Phase {
    engine.phase
  }

  /// What the connection has done: lines written, sent, not kept; connections; refusals.
  public var statistics: Statistics {
    let counts = engine.statistics
    return Statistics(
      linesWritten: counts.written, linesSent: counts.sent, linesNotKept: counts.dropped,
      linesWrittenWhilePaused: counts.paused, connections: counts.connections, refusals: counts.refusals)
  }

  /// Sends the lines written so far, waiting at most `timeout` seconds for the inspector to take
  /// them; returns whether it did. For the end of a program: the lines of its last actions are
  /// still in the buffer when it exits. Flushes ``log`` first.
  ///
  /// - Parameter timeout: The longest wait, in seconds.
  /// - Returns: `true` when every line written is sent (or counted as not kept), `false` when the
  ///   time ran out or no inspector is connected.
  @discardableResult
  public func send(waitingAtMost timeout: Double) -> Bool {
    log.flush()
    return engine.waitUntilSent(timeout: timeout)
  }

  /// Ends the connection, for good: the socket closes, and nothing more is attempted. Lines
  /// written afterwards are kept in the buffer, up to its limits, and never sent; commands that
  /// wait are dropped. Returns once the connection's thread has ended (or after two seconds).
  public func close() {
    engine.close()
    registry.close()
  }
}
