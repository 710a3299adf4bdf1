import MallocCounter

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What one run of one workload of one contender found.
struct Sample {
  /// Nanoseconds per operation: the best timed round.
  var nanoseconds: Double
  /// Heap allocations per operation, or `nil` where they cannot be counted.
  var allocations: Double?
  /// W9: resident bytes per observer.
  var bytes: Double?
}

/// A counter that disagrees with what the workload sent.
struct WrongCounter: Error, CustomStringConvertible {
  let workload: Workload
  let implementation: Implementation
  let expected: Int
  let actual: Int

  var description: String {
    "\(workload.rawValue) \(implementation.title): counter is \(actual), expected \(expected)"
  }
}

/// Runs one workload of one contender: a warm-up round, a round with allocations counted,
/// then `rounds` timed rounds, and checks the counter.
func measure(
  _ workload: Workload,
  _ implementation: Implementation,
  smoke: Bool,
  rounds: Int,
  size: Int? = nil
) throws(WrongCounter) -> Sample {
  if workload == .w9 { return try measureMemory(implementation, count: size ?? workload.size(smoke: smoke)) }
  let tally = Tally()
  defer { tally.free() }
  let size = size ?? workload.size(smoke: smoke)
  let units = Double(workload.unitsPerIndex)
  let timedRounds = rounds
  var rounds = Rounds(implementation.prepare(workload, tally: tally), tally: tally)

  let shortRound = max(1, size / 10)
  _ = rounds.run(shortRound)

  let counting = allocationCountingWorks()
  flux_bench_count_allocations(1)
  let allocationsBefore = flux_bench_allocations()
  _ = rounds.run(shortRound)
  let allocationsAfter = flux_bench_allocations()
  flux_bench_count_allocations(0)

  let best = rounds.best(of: timedRounds, size: size)
  let expected = rounds.finish()
  guard tally.total == expected else {
    throw WrongCounter(workload: workload, implementation: implementation, expected: expected, actual: tally.total)
  }
  return Sample(
    nanoseconds: Double(best) / (Double(size) * units),
    allocations: counting ? Double(allocationsAfter - allocationsBefore) / (Double(shortRound) * units) : nil
  )
}

/// W9: resident memory and time of many live observers on one sink.
private func measureMemory(_ implementation: Implementation, count: Int) throws(WrongCounter) -> Sample {
  let tally = Tally()
  defer { tally.free() }
  let memory = implementation.memory(tally: tally)
  memory.reserve(count)
  let residentBefore = residentBytes()
  let start = now()
  memory.subscribe(count)
  let end = now()
  let residentAfter = residentBytes()
  memory.send(3)
  memory.release()
  guard tally.total == 3 * count else {
    throw WrongCounter(workload: .w9, implementation: implementation, expected: 3 * count, actual: tally.total)
  }
  return Sample(
    nanoseconds: Double(end - start) / Double(count),
    allocations: nil,
    bytes: Double(residentAfter - residentBefore) / Double(count)
  )
}

/// Whether the allocation counter sees an allocation: false where malloc is not interposed.
func allocationCountingWorks() -> Bool {
  flux_bench_count_allocations(1)
  let before = flux_bench_allocations()
  let block = UnsafeMutableRawPointer.allocate(byteCount: 48, alignment: 8)
  let after = flux_bench_allocations()
  flux_bench_count_allocations(0)
  block.deallocate()
  return after > before
}

/// Monotonic nanoseconds.
func now() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The resident set size of this process, from `/proc/self/statm` (0 where there is none).
func residentBytes() -> Int {
  let file = open("/proc/self/statm", O_RDONLY)
  guard file >= 0 else { return 0 }
  defer { close(file) }
  var buffer = [UInt8](repeating: 0, count: 256)
  let length = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
  guard length > 0 else { return 0 }
  let fields = buffer[0..<length].split(separator: UInt8(ascii: " "))
  guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The timed rounds of one prepared workload: each round runs the next indices, and what they
/// must add to the tally is summed as they go.
struct Rounds {
  private let prepared: Prepared
  private var expected: Int
  private var next = 0

  init(_ prepared: Prepared, tally: Tally) {
    self.prepared = prepared
    expected = tally.total
  }

  /// Runs the next `count` indices and returns how long that took, in nanoseconds.
  mutating func run(_ count: Int) -> UInt64 {
    let range = next..<(next + count)
    let start = now()
    prepared.run(range)
    let end = now()
    expected &+= prepared.expected(range)
    next += count
    return end - start
  }

  /// The fastest of `count` rounds of `size` indices.
  mutating func best(of count: Int, size: Int) -> UInt64 {
    var best = UInt64.max
    for _ in 0..<count { best = min(best, run(size)) }
    return best
  }

  /// Runs the workload's `finish` and returns what the tally must hold.
  mutating func finish() -> Int {
    expected &+= prepared.finish()
    return expected
  }
}
