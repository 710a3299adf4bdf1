/// The workloads, in the order the table lists them.
enum Workload: String, CaseIterable, Sendable {
  case w1 = "W1"
  case w2 = "W2"
  case w3 = "W3"
  case w3o = "W3o"
  case w3r = "W3r"
  case w3m = "W3m"
  case w4 = "W4"
  case w5 = "W5"
  case w6 = "W6"
  case w6i = "W6i"
  case w7 = "W7"
  case w8 = "W8"
  case w9 = "W9"
  case w10 = "W10"
  case w10i = "W10i"
  case w11 = "W11"
  case w12 = "W12"
  case w12i = "W12i"
  case w13 = "W13"
  case w14 = "W14"
  case w15 = "W15"
  case w16 = "W16"
  case w17 = "W17"
  case w18 = "W18"

  /// A short name for the table.
  var name: String {
    switch self {
    case .w1: return "send-1"
    case .w2: return "send-10"
    case .w3: return "variable-set"
    case .w3o: return "variable-set-tracked"
    case .w3r: return "variable-set-after-read"
    case .w3m: return "variable-add-in-place"
    case .w4: return "map-chain"
    case .w5: return "subscribe-churn"
    case .w6: return "store-dispatch"
    case .w6i: return "store-dispatch-idiomatic"
    case .w7: return "global-dispatch"
    case .w8: return "contention"
    case .w9: return "memory"
    case .w10: return "store-middleware"
    case .w10i: return "store-middleware-idiomatic"
    case .w11: return "observe-on-immediate"
    case .w12: return "global-one-store"
    case .w12i: return "global-one-store-idiomatic"
    case .w13: return "logged-action"
    case .w14: return "logged-action-state"
    case .w15: return "array-append"
    case .w16: return "array-remove-append"
    case .w17: return "todo-store-1000"
    case .w18: return "string-append"
    }
  }

  /// What one operation is.
  var unit: String {
    switch self {
    case .w1, .w2, .w4, .w8, .w11: return "send"
    case .w3, .w3o, .w3r, .w3m: return "set"
    case .w5: return "pair"
    case .w6, .w10, .w12, .w6i, .w10i, .w12i, .w13, .w14, .w17: return "action"
    case .w15, .w16, .w18: return "change"
    case .w7: return "delivery"
    case .w9: return "subscribe"
    }
  }

  /// The number of indices (sends, sets, pairs, actions, observers) one timed round runs.
  func size(smoke: Bool) -> Int {
    switch self {
    case .w5: return smoke ? 100 : 100_000
    case .w7: return smoke ? 10 : 10_000
    case .w13, .w14: return smoke ? 100 : 20_000
    default: return smoke ? 1_000 : 1_000_000
    }
  }

  /// How many deliveries one index stands for: the stores reached by one global action.
  var unitsPerIndex: Int {
    self == .w7 ? Workload.globalStores : 1
  }

  /// The largest Flux / baseline time ratio the targets allow.
  var ratioTarget: Double? {
    switch self {
    case .w1, .w2, .w3, .w4, .w5, .w6, .w7, .w8, .w11, .w3m, .w6i, .w10i, .w12i, .w15, .w16, .w17, .w18: return 1.5
    case .w10: return 2
    case .w12: return 1.3
    case .w3r: return 1
    case .w9, .w3o, .w13, .w14: return nil  // W13, W14: the log's cost, against no log
    }
  }

  /// The most allocations per operation the targets allow Flux.
  var allocationTarget: Double? {
    switch self {
    case .w5: return 1
    case .w9, .w3o, .w13, .w14: return nil  // W3o: Observation allocates a tracking per set; W13, W14 encode JSON
    case .w15, .w18: return 0.01  // a growing array or string reallocates now and then
    default: return 0
    }
  }

  /// The workloads whose state is a collection or a string, changed in place (Flux and the
  /// baseline only).
  static let collections: Set<Workload> = [.w15, .w16, .w17, .w18]

  /// W5's standing observers.
  static let standingObservers = 100
  /// W7's stores.
  static let globalStores = 100
  /// W9's most bytes per observer for Flux.
  static let bytesPerObserverTarget = 48.0
}

/// The contenders.
enum Implementation: String, CaseIterable, Sendable {
  case flux
  case baseline
  case openCombine = "opencombine"
  case observable

  /// The name for the table.
  var title: String {
    switch self {
    case .flux: return "Flux"
    case .baseline: return "baseline"
    case .openCombine: return "OpenCombine"
    case .observable: return "@Observable"
    }
  }

  /// Whether this contender runs `workload`: the `@Observable` class runs only the sets of one
  /// value (W3, W3r, W3m, W3o), where it can do what the others do.
  func runs(_ workload: Workload) -> Bool {
    switch self {
    case .flux, .baseline: return true
    case .openCombine: return !Workload.collections.contains(workload)
    case .observable: return [.w3, .w3r, .w3m, .w3o].contains(workload)
    }
  }

  /// Makes `workload` ready to run, with every observer adding into `tally`.
  func prepare(_ workload: Workload, tally: Tally) -> Prepared {
    switch self {
    case .flux: return FluxWorkloads.prepare(workload, tally: tally)
    case .baseline: return BaselineWorkloads.prepare(workload, tally: tally)
    case .openCombine: return OpenCombineWorkloads.prepare(workload, tally: tally)
    case .observable: return ObservableWorkloads.prepare(workload, tally: tally)
    }
  }

  /// W9 for this contender.
  func memory(tally: Tally) -> MemoryWorkload {
    switch self {
    case .flux: return FluxWorkloads.memory(tally: tally)
    case .baseline: return BaselineWorkloads.memory(tally: tally)
    case .openCombine: return OpenCombineWorkloads.memory(tally: tally)
    case .observable: preconditionFailure("the @Observable contender has no W9")
    }
  }
}

/// The counter every observer adds what it receives into, checked after the run.
///
/// A raw pointer, so that adding costs the same in every contender: no class, no exclusivity
/// check. The workloads that send from two threads rely on the contender serializing delivery;
/// a lost update there fails the check.
struct Tally: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<Int>

  init() {
    pointer = .allocate(capacity: 1)
    pointer.initialize(to: 0)
  }

  var total: Int { pointer.pointee }

  @inline(__always)
  func add(_ value: Int) {
    pointer.pointee &+= value
  }

  func free() {
    pointer.deallocate()
  }
}

/// One workload of one contender, ready to run.
struct Prepared {
  /// Performs one operation per index of the range; the index is the value sent.
  let run: (Range<Int>) -> Void
  /// What running a range must add to the tally.
  let expected: (Range<Int>) -> Int
  /// Run once after the timed rounds; returns what it must add to the tally.
  let finish: () -> Int

  init(
    run: @escaping (Range<Int>) -> Void,
    expected: @escaping (Range<Int>) -> Int,
    finish: @escaping () -> Int = { 0 }
  ) {
    self.run = run
    self.expected = expected
    self.finish = finish
  }
}

/// W9 of one contender: many live observers on one sink.
struct MemoryWorkload {
  /// Makes room for `count` handles and touches it, so the holder is not counted as observer
  /// memory.
  let reserve: (_ count: Int) -> Void
  /// Adds `count` observers, keeping their handles.
  let subscribe: (_ count: Int) -> Void
  /// Sends one value to every observer.
  let send: (Int) -> Void
  /// Disposes everything.
  let release: () -> Void
}

/// A fixed-size, pre-touched home for `count` handles, outside the measured memory.
final class Holder<Handle> {
  private let base: UnsafeMutablePointer<Handle>
  private let capacity: Int
  private var count = 0

  init(capacity: Int) {
    self.capacity = capacity
    base = .allocate(capacity: capacity)
    let raw = UnsafeMutableRawPointer(base)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * MemoryLayout<Handle>.stride)
  }

  func append(_ handle: Handle) {
    precondition(count < capacity, "holder is full")
    (base + count).initialize(to: handle)
    count += 1
  }

  func forEach(_ body: (Handle) -> Void) {
    for index in 0..<count { body(base[index]) }
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }
}

/// The sum of `transform(index)` over `range`, with wrapping arithmetic like the observers'.
func sum(_ range: Range<Int>, _ transform: (Int) -> Int = { $0 }) -> Int {
  var total = 0
  for index in range { total &+= transform(index) }
  return total
}
