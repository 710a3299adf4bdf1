// Linux only: the loopback inspector below is written with Glibc's sockets and threads.
#if canImport(Glibc)
  import FluxCore
  import FluxDevtools
  import FluxReactive
  import Glibc
  import Synchronization

  /// `flux-bench inspector`: what an `InspectorConnection` costs a store that commits, with a
  /// todo-sized state (a list of 20 items, its snapshot written with every line).
  ///
  /// Each mode commits the same actions on one thread (`.immediate`) and times the dispatches:
  /// the cost on the committing thread. Then it waits for the log and the connection to take every
  /// line, and times the whole: the throughput. Modes: no log (the yardstick); an `ActionLog` to
  /// memory (the log's own cost); the connection's log with a live inspector (a loopback server of
  /// this process that reads and answers), a slow one (reads 4 KiB every 10 ms), and a dead one
  /// (nothing listens on its port).
  enum InspectorBench {
    enum Mode: String, CaseIterable {
      case none = "no log"
      case memory = "log to memory"
      case live = "inspector, live"
      case slow = "inspector, slow"
      case dead = "inspector, dead"

      /// Its name for `--modes`.
      var key: String {
        switch self {
        case .none: "none"
        case .memory: "memory"
        case .live: "live"
        case .slow: "slow"
        case .dead: "dead"
        }
      }
    }

    static let usage =
      "flux-bench inspector [--actions N] [--rounds N] [--modes "
      + Mode.allCases.map(\.key).joined(separator: ",") + "]"

    struct Result {
      var mode: Mode
      /// Nanoseconds per commit on the committing thread: the best round.
      var commit: Double
      /// Commits per second, the lines taken by the log and the connection included: the best round.
      var throughput: Double
      var sent = 0
      var notKept = 0
    }

    static func main(_ arguments: ArraySlice<String>) -> Int32 {
      var actions = 20_000
      var rounds = 3
      var modes = Mode.allCases
      var iterator = arguments.makeIterator()
      while let option = iterator.next() {
        guard let text = iterator.next(), let value = option == "--modes" ? 1 : Int(text), value > 0 else {
          printError(usage)
          return 2
        }
        switch option {
        case "--actions": actions = min(value, 10_000_000)
        case "--rounds": rounds = min(value, 100)
        case "--modes":
          modes = text.split(separator: ",").compactMap { name in Mode.allCases.first { $0.key == name } }
        default:
          printError(usage)
          return 2
        }
      }
      print("| mode | ns per commit, committing thread | commits/s, lines taken | lines sent | lines not kept |")
      print("|---|--:|--:|--:|--:|")
      // Rounds interleave the modes, so that the machine's slow and fast moments hit each alike;
      // each mode keeps its best round.
      var results: [Mode: Result] = [:]
      for _ in 0..<rounds {
        for mode in modes {
          let round = measure(mode, actions: actions)
          var best = results[mode] ?? round
          best.commit = min(best.commit, round.commit)
          best.throughput = max(best.throughput, round.throughput)
          best.sent = round.sent
          best.notKept = round.notKept
          results[mode] = best
        }
      }
      for mode in modes {
        guard let result = results[mode] else { continue }
        let sent = mode == .none || mode == .memory ? "–" : "\(result.sent)"
        let notKept = mode == .none || mode == .memory ? "–" : "\(result.notKept)"
        print(
          "| \(mode.rawValue) | \(format(result.commit)) | \(format(result.throughput)) | \(sent) | \(notKept) |")
      }
      if let memory = results[.memory], let none = results[.none] {
        print("\nthe log's own cost per commit: \(format(memory.commit - none.commit)) ns")
        for mode in [Mode.live, .slow, .dead] {
          guard let result = results[mode] else { continue }
          print("the connection's added cost per commit, \(mode.rawValue): \(format(result.commit - memory.commit)) ns")
        }
      }
      return 0
    }

    /// One round of `mode`: `actions` commits.
    private static func measure(_ mode: Mode, actions: Int) -> Result {
      var best = Result(mode: mode, commit: .infinity, throughput: 0)
      do {
        let server: BenchInspector? =
          switch mode {
          case .live: BenchInspector(slow: false)
          case .slow: BenchInspector(slow: true)
          case .none, .memory, .dead: nil
          }
        let deadPort = mode == .dead ? BenchInspector.deadPort() : nil
        var connection: InspectorConnection?
        var log: ActionLog?
        switch mode {
        case .none: break
        case .memory:
          let bytes = Counter()
          log = ActionLog(output: ActionLogOutput { bytes.add($0.utf8.count) }, fields: .all)
        case .live, .slow, .dead:
          var options = InspectorConnection.Options()
          options.report = { _ in }
          let port = server?.port ?? deadPort ?? 1
          let made = InspectorConnection(host: "127.0.0.1", port: port, appName: "flux-bench", options: options)
          connection = made
          log = made.log
          if mode != .dead {
            let deadline = now() + 5_000_000_000
            while made.phase != .connected && now() < deadline { usleep(1_000) }
          }
        }
        let store = Store<BenchListState>(
          state: BenchListState(), mutations: BenchListMutations(), executor: .immediate,
          middlewares: log.map { [$0.middleware(label: "list", snapshots: .snapshot)] } ?? [])
        // A todo-sized list: 20 items.
        for index in 0..<20 { store.actions.dispatch(action: .add(title: "Item number \(index)")) }
        for index in 0..<1_000 { store.actions.dispatch(action: .toggle(id: index % 20)) }
        connection?.send(waitingAtMost: 5)
        log?.flush()

        let start = now()
        for index in 0..<actions { store.actions.dispatch(action: .toggle(id: index % 20)) }
        let committed = now()
        log?.flush()
        if let connection, mode == .live { connection.send(waitingAtMost: 60) }
        let taken = now()
        best.commit = min(best.commit, Double(committed - start) / Double(actions))
        best.throughput = max(best.throughput, Double(actions) * 1e9 / Double(max(1, taken - start)))
        if let statistics = connection?.statistics {
          best.sent = statistics.linesSent
          best.notKept = statistics.linesNotKept
        }
        connection?.close()
        server?.stop()
        withExtendedLifetime(store) {}
      }
      return best
    }

    private static func now() -> UInt64 {
      var time = timespec()
      clock_gettime(CLOCK_MONOTONIC, &time)
      return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func format(_ value: Double) -> String {
      value >= 1000 ? String(Int(value.rounded())) : String(Double(Int(value * 10)) / 10)
    }
  }

  /// A byte count shared with the log's output.
  private final class Counter: Sendable {
    private let total = Atomic<Int>(0)

    func add(_ count: Int) {
      total.wrappingAdd(count, ordering: .relaxed)
    }
  }

  /// A stand-in for `flux-inspector`, in this process: welcomes the app, answers its pings, and
  /// reads what it sends, at once or slowly.
  private final class BenchInspector: @unchecked Sendable {
    // `@unchecked Sendable`: every stored property is a constant; `open` is a `Mutex`.
    let port: Int
    private let listener: Int32
    private let slow: Bool
    /// Whether it stopped, and the connections it serves.
    private let open = Mutex((isStopped: false, connections: [Int32]()))

    init?(slow: Bool) {
      self.slow = slow
      guard let (listener, port) = Self.listen() else { return nil }
      self.listener = listener
      self.port = port
      let thread = BenchThread { [self] in accepting() }
      thread.start()
    }

    /// A port nothing listens on: one taken from the system, then let go.
    static func deadPort() -> Int? {
      guard let (listener, port) = listen() else { return nil }
      close(listener)
      return port
    }

    private static func listen() -> (Int32, Int)? {
      let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      guard listener >= 0 else { return nil }
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = 0
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard bound == 0, Glibc.listen(listener, 8) == 0 else {
        close(listener)
        return nil
      }
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
      }
      return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    func stop() {
      let connections: [Int32] = open.withLock { state in
        state.isStopped = true
        defer { state.connections = [] }
        return state.connections
      }
      for connection in connections { shutdown(connection, Int32(SHUT_RDWR)) }
      shutdown(listener, Int32(SHUT_RDWR))
      close(listener)
    }

    private func accepting() {
      while true {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        let isTaken = open.withLock {
          guard !$0.isStopped else { return false }
          $0.connections.append(connection)
          return true
        }
        guard isTaken else {
          close(connection)
          return
        }
        BenchThread { [self] in serve(connection) }.start()
      }
    }

    private func serve(_ connection: Int32) {
      defer { close(connection) }
      var pending: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: slow ? 4096 : 1 << 16)
      var welcomed = false
      while true {
        let count = recv(connection, &chunk, chunk.count, 0)
        guard count > 0 else { return }
        if slow { usleep(10_000) }
        // Only the hello and pings need an answer; the lines are read and dropped.
        if !welcomed {
          pending.append(contentsOf: chunk[0..<count])
          guard pending.contains(UInt8(ascii: "\n")) else { continue }
          welcomed = true
          pending = []
          answer(connection, "{\"type\":\"welcome\",\"protocol\":1,\"have\":0}\n")
        } else if count < 32, chunk[0..<count].starts(with: Array("{\"type\":\"ping\"}".utf8)) {
          answer(connection, "{\"type\":\"pong\"}\n")
        }
      }
    }

    private func answer(_ connection: Int32, _ text: String) {
      _ = send(connection, text, text.utf8.count, Int32(MSG_NOSIGNAL))
    }
  }

  /// A detached POSIX thread that runs a closure.
  private final class BenchThread: @unchecked Sendable {
    // `@unchecked Sendable`: `body` is a constant, run once on the new thread.
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
      self.body = body
    }

    func start() {
      let box = Unmanaged.passRetained(self).toOpaque()
      var thread = pthread_t()
      let made = pthread_create(
        &thread, nil,
        { raw in
          let me = Unmanaged<BenchThread>.fromOpaque(raw!).takeRetainedValue()
          me.body()
          return nil
        }, box)
      precondition(made == 0, "flux-bench: pthread_create failed with \(made)")
      pthread_detach(thread)
    }
  }

  /// A todo list's state, as the `todo` example has it: items in one variable, its snapshot.
  final class BenchListState: State, Snapshotting {
    typealias Action = BenchListAction
    typealias Mutations = BenchListMutations

    struct Item: Codable, Sendable {
      var id: Int
      var title: String
      var isDone: Bool
    }

    let items = Variable<[Item]>([])

    var snapshot: [Item] { items.value }

    static func restore(_ snapshot: [Item]) -> BenchListAction { .restore(items: snapshot) }
  }

  enum BenchListAction: Codable, Sendable {
    case add(title: String)
    case toggle(id: Int)
    case restore(items: [BenchListState.Item])
  }

  struct BenchListMutations: Mutations {
    func commit(action: BenchListAction, state: BenchListState) {
      state.items.modify { items in
        switch action {
        case .add(let title): items.append(.init(id: items.count, title: title, isDone: false))
        case .toggle(let id): if items.indices.contains(id) { items[id].isDone.toggle() }
        case .restore(let restored): items = restored
        }
      }
    }
  }
#endif
