/// The scaling curves: the cost of one item as what it works on grows.
enum Curve: String, CaseIterable, Sendable {
  /// Per delivery: one send to a sink with `size` observers.
  case send
  /// Per store: one global action reaching `size` live stores of one state type.
  case global
  /// Per pair: one observer added and disposed beside `size` standing observers.
  case churn
  /// Per action: a store on `.queue(serial)` fed by one thread, `size` actions per batch.
  case queue
  /// Per action: a store on `.mainThread` fed from a worker thread, `size` actions per batch.
  case main

  /// A short name for the table.
  var name: String {
    switch self {
    case .send: return "send"
    case .global: return "global dispatch"
    case .churn: return "subscribe + dispose"
    case .queue: return "store on .queue"
    case .main: return "store on .mainThread"
    }
  }

  /// What the size counts.
  var sizeName: String {
    switch self {
    case .send: return "observers on one sink"
    case .global: return "live stores of one type"
    case .churn: return "standing observers"
    case .queue, .main: return "actions per batch"
    }
  }

  /// The item the time is divided by.
  var unit: String {
    switch self {
    case .send: return "delivery"
    case .global: return "store"
    case .churn: return "pair"
    case .queue, .main: return "action"
    }
  }

  /// Whether `implementation` has an equivalent of this curve: the baseline runs no work on a
  /// queue.
  func applies(to implementation: Implementation) -> Bool {
    implementation == .flux || implementation == .openCombine
      || (implementation == .baseline && (self == .send || self == .global || self == .churn))
  }

  /// The sizes of a full run; the per-item cost at the last is compared with that at
  /// ``referenceSize``.
  var sizes: [Int] {
    switch self {
    case .send, .global: return [1, 10, 100, 1_000, 10_000, 100_000]
    case .churn: return [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
    case .queue, .main: return [100, 1_000, 10_000, 100_000, 1_000_000]
    }
  }

  /// The sizes the smoke run checks.
  static let smokeSizes = [referenceSize, 10_000]

  /// The share of a full point's work the smoke run does: all of it for the stores on a queue,
  /// whose batches of 10,000 vary most from one to the next.
  var smokeWork: Double {
    self == .queue || self == .main ? 1 : 0.25
  }

  /// The size every curve's growth is measured from.
  static let referenceSize = 100

  /// The most the per-item cost at the largest size may be, as a multiple of that at 100.
  static let growthLimit = 2.0

  /// Operations per round at `size` (sends, global actions, pairs, batches), so that a round
  /// does about the same work at every size; `work` scales it. OpenCombine, 5 to 70 times
  /// slower per delivery and pair, does a quarter of Flux's; the largest batch is 1,000,000
  /// actions for both.
  func operations(size: Int, work: Double, implementation: Implementation) -> Int {
    let items: Double
    switch self {
    case .send: items = 4_000_000
    case .global: items = 2_000_000
    case .churn: items = 200_000
    case .queue, .main: items = 250_000
    }
    let share = implementation == .openCombine && self != .queue && self != .main ? 0.25 : 1
    return max(1, Int(items * work * share) / itemsPerOperation(size: size))
  }

  /// The items one operation stands for.
  func itemsPerOperation(size: Int) -> Int {
    self == .churn ? 1 : size
  }

  /// Timed rounds per point; the fastest counts.
  var rounds: Int {
    switch self {
    case .send, .global, .churn: return 2
    case .queue, .main: return 1
    }
  }
}
