import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A counter of a scaling point that disagrees with what the point sent.
struct ScalingMismatch: Error, CustomStringConvertible {
  let curve: Curve
  let implementation: Implementation
  let size: Int
  let expected: Int
  let actual: Int

  var description: String {
    "\(curve.rawValue) \(implementation.title) at \(size): counter is \(actual), expected \(expected)"
  }
}

/// One curve of one contender at one size, ready to run: one operation per index of a range.
struct ScalingPoint {
  let prepared: Prepared
  /// Resident bytes per standing observer, or per live store, where the point measures them.
  var bytesPerItem: Double?
}

/// A global-dispatch point of `count` stores, and the growth of the resident set while
/// `prepare` made them, per store: the library's memory for each store and its state, plus
/// the 8 bytes by which the workload holds it (Flux's stores and OpenCombine's subscriptions,
/// in an array; the baseline's registry holds its stores itself).
func liveStores(_ count: Int, _ prepare: () -> Prepared) -> ScalingPoint {
  let residentBefore = residentBytes()
  let prepared = prepare()
  return ScalingPoint(prepared: prepared, bytesPerItem: Double(residentBytes() - residentBefore) / Double(count))
}

/// The subscribe + dispose curve's standing observers: `count` handles from `subscribe`, kept
/// in a pre-touched holder, so that the growth of the resident set while they subscribe is
/// what the library allocates for them. Returns the holder and that growth per observer.
func standing<Handle>(_ count: Int, _ subscribe: () -> Handle) -> (Holder<Handle>, bytesPerItem: Double) {
  let holder = Holder<Handle>(capacity: count)
  let residentBefore = residentBytes()
  for _ in 0..<count { holder.append(subscribe()) }
  return (holder, Double(residentBytes() - residentBefore) / Double(count))
}

extension Implementation {
  /// Makes `curve` ready to run at `size`, with every observer or mutation adding into `tally`.
  func scalingPoint(_ curve: Curve, size: Int, tally: Tally) -> ScalingPoint {
    switch self {
    case .flux: return FluxScaling.point(curve, size: size, tally: tally)
    case .openCombine: return OpenCombineScaling.point(curve, size: size, tally: tally)
    case .baseline: return BaselineScaling.point(curve, size: size, tally: tally)
    case .observable: preconditionFailure("the @Observable contender has no scaling curve")
    }
  }
}

/// Measures `curve` of one contender at `size`: a warm-up round of a tenth of the operations,
/// then the curve's timed rounds; the fastest, in nanoseconds per item. Checks the counter.
func measureScaling(
  _ curve: Curve,
  _ implementation: Implementation,
  size: Int,
  work: Double
) throws(ScalingMismatch) -> Sample {
  let tally = Tally()
  defer { tally.free() }
  let point = implementation.scalingPoint(curve, size: size, tally: tally)
  let operations = curve.operations(size: size, work: work, implementation: implementation)
  var rounds = Rounds(point.prepared, tally: tally)
  _ = rounds.run(max(1, operations / 10))
  let best = rounds.best(of: curve.rounds, size: operations)
  let expected = rounds.finish()

  guard tally.total == expected else {
    throw ScalingMismatch(
      curve: curve, implementation: implementation, size: size, expected: expected, actual: tally.total)
  }
  let items = Double(operations) * Double(curve.itemsPerOperation(size: size))
  return Sample(nanoseconds: Double(best) / items, allocations: nil, bytes: point.bytesPerItem)
}

/// `flux-bench scaling-child CURVE IMPLEMENTATION SIZE [--work F]`: one point, printed as a
/// `RESULT` line. The `.mainThread` curve measures on a worker thread while the main thread
/// runs `dispatchMain()`.
func scalingChild(_ arguments: ArraySlice<String>) -> Int32 {
  let values = Array(arguments)
  guard values.count >= 3, let curve = Curve(rawValue: values[0]),
    let implementation = Implementation(rawValue: values[1]), curve.applies(to: implementation),
    let size = Int(values[2]), size > 0
  else {
    printError(usage)
    return 2
  }
  let work = values.firstIndex(of: "--work").flatMap { $0 + 1 < values.count ? Double(values[$0 + 1]) : nil } ?? 1
  guard curve == .main else { return measureAndPrint(curve, implementation, size: size, work: work) }
  DispatchQueue.global().async {
    exit(measureAndPrint(curve, implementation, size: size, work: work))
  }
  dispatchMain()
}

private func measureAndPrint(_ curve: Curve, _ implementation: Implementation, size: Int, work: Double) -> Int32 {
  do {
    let sample = try measureScaling(curve, implementation, size: size, work: work)
    print(resultLine(sample))
    return 0
  } catch {
    printError("wrong counter: \(error)")
    return 1
  }
}
