import FluxCore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What the observers of one sink or variable saw while several threads sent values into it,
/// observed and disposed at once; and the checks of invariants 1 to 5 on it.
///
/// Sender `s` sends `s * perSender + i` for `i` in `0..<perSender`, in that order. The observers
/// `0..<steadyObservers` are added before the threads start and disposed after they end; the
/// others come and go while values flow.
final class ThreadedDeliveryLog: @unchecked Sendable {
  struct Entry {
    let value: Int
    let thread: pthread_t
  }

  let senders: Int
  let perSender: Int
  let steadyObservers: Int

  private let lock = Lock()
  // Every property below is guarded by `lock`.
  private var entries: [Int: [Entry]] = [:]
  private var received: [Int: Set<Int>] = [:]
  private var senderThreads: [Int: pthread_t] = [:]
  private var disposed: Set<Int> = []
  private var activeCalls = 0
  private var finishedSenders = 0
  private var problems: [String] = []

  init(senders: Int, perSender: Int, steadyObservers: Int) {
    self.senders = senders
    self.perSender = perSender
    self.steadyObservers = steadyObservers
  }

  /// The observer closure of observer `id`: records each call and whether it overlapped another.
  func observer(_ id: Int) -> @Sendable (Int) -> Void {
    { value in
      self.lock.withLock {
        if self.activeCalls > 0 { self.problems.append("#\(id) was called with \(value) during another call") }
        if self.disposed.contains(id) { self.problems.append("#\(id) got \(value) after its dispose() returned") }
        self.activeCalls += 1
        self.entries[id, default: []].append(Entry(value: value, thread: pthread_self()))
        self.received[id, default: []].insert(value)
      }
      self.lock.withLock { self.activeCalls -= 1 }
    }
  }

  /// Records the thread of sender `sender`; call it on that thread before it sends.
  func registerSender(_ sender: Int) {
    lock.withLock { senderThreads[sender] = pthread_self() }
  }

  /// Checks, right after a send returned, that every steady observer has the value (invariant 3).
  func checkDelivered(_ value: Int) {
    lock.withLock {
      for id in 0..<steadyObservers where received[id]?.contains(value) != true {
        problems.append("send(\(value)) returned before #\(id) got it")
      }
    }
  }

  /// Records that a sender has sent all its values.
  func markSenderFinished() {
    lock.withLock { finishedSenders += 1 }
  }

  /// Whether every sender has sent all its values.
  var allSendersFinished: Bool {
    lock.withLock { finishedSenders == senders }
  }

  /// Records that observer `id`'s `dispose()` has returned.
  func markDisposed(_ id: Int) {
    lock.withLock { _ = disposed.insert(id) }
  }

  /// Every broken rule: for a sink, or for a variable whose initial value `initial` was
  /// replayed to the steady observers.
  func findProblems(initial: Int? = nil) -> [String] {
    lock.withLock {
      let global = entries[0, default: []].map(\.value)
      return problems + steadyProblems(global, initial: initial) + threadProblems(replays: initial != nil)
        + churnProblems(global, replays: initial != nil)
    }
  }

  /// Invariants 1 to 3: every steady observer got every value once, all in one order that
  /// keeps each sender's order.
  private func steadyProblems(_ global: [Int], initial: Int?) -> [String] {
    var found: [String] = []
    let expectedCount = senders * perSender + (initial == nil ? 0 : 1)
    for id in 0..<steadyObservers {
      let values = entries[id, default: []].map(\.value)
      if values.count != expectedCount || Set(values).count != expectedCount {
        found.append("#\(id) got \(values.count) values (\(Set(values).count) distinct), not \(expectedCount)")
      }
      if values != global { found.append("#\(id) saw another order than #0") }
    }
    if let initial, global.first != initial { found.append("#0 did not start with \(initial)") }
    for sender in 0..<senders {
      let sent = global.filter { $0 >= 0 && $0 / perSender == sender }
      if sent != sent.sorted() { found.append("values of sender \(sender) out of order: \(sent)") }
    }
    return found
  }

  /// Invariant 1: every value reached its observers on the thread that sent it. A variable
  /// replays its current value on the observing thread: that first call is not checked.
  private func threadProblems(replays: Bool) -> [String] {
    var found: [String] = []
    for (id, log) in entries {
      for entry in log.dropFirst(replays ? 1 : 0) {
        guard let sender = senderThreads[entry.value / perSender] else { continue }
        if pthread_equal(sender, entry.thread) == 0 {
          found.append("#\(id) got \(entry.value) on another thread than its sender's")
        }
      }
    }
    return found
  }

  /// Invariants 3 to 5: an observer that came and went saw a run of the global order, with
  /// nothing skipped or doubled; on a variable, after the value just before that run.
  private func churnProblems(_ global: [Int], replays: Bool) -> [String] {
    var found: [String] = []
    let position = Dictionary(global.enumerated().map { ($1, $0) }, uniquingKeysWith: min)
    for (id, log) in entries where id >= steadyObservers {
      let values = log.map(\.value)
      let changes = replays ? values.dropFirst() : values[...]
      if let first = changes.first {
        guard let start = position[first], Array(global[start...].prefix(changes.count)) == Array(changes) else {
          found.append("#\(id) saw \(values), not a run of the global order")
          continue
        }
        if replays, start == 0 || global[start - 1] != values[0] {
          found.append("#\(id) was replayed \(values[0]), not the value before \(first)")
        }
      } else if replays, let replayed = values.first, position[replayed] == nil {
        found.append("#\(id) was replayed \(replayed), which was never the value")
      }
    }
    return found
  }
}
