/// The options of a scaling run.
struct ScalingOptions {
  var repetitions = 3
  var curves = Curve.allCases
  var implementations: [Implementation] = [.flux, .baseline, .openCombine]
  /// Scales the operations per point.
  var work = 1.0
  /// Replaces every curve's sizes.
  var sizes: [Int]?
  var jsonPath: String?
  /// Whether each child is announced on standard error.
  var showsProgress = true

  func sizes(_ curve: Curve) -> [Int] {
    sizes ?? curve.sizes
  }
}

/// Samples by curve, contender and size.
typealias ScalingSamples = [Curve: [Implementation: [Int: [Sample]]]]

/// `flux-bench scaling [--reps N] [--curves send,global] [--implementations flux] [--work F]
/// [--sizes 100,10000] [--json PATH]`: prints the table and writes the results file.
func scaling(_ arguments: ArraySlice<String>) -> Int32 {
  var options = ScalingOptions()
  var remaining = arguments
  while let option = remaining.popFirst() {
    guard let value = remaining.popFirst() else {
      printError(usage)
      return 2
    }
    let list = value.split(separator: ",").map(String.init)
    switch option {
    case "--reps": options.repetitions = max(1, Int(value) ?? options.repetitions)
    case "--work": options.work = Double(value) ?? options.work
    case "--json": options.jsonPath = value
    case "--curves": options.curves = list.compactMap { Curve(rawValue: $0) }
    case "--implementations":
      options.implementations = list.compactMap { Implementation(rawValue: $0) }
    case "--sizes": options.sizes = list.compactMap { Int($0) }
    default:
      printError(usage)
      return 2
    }
  }
  guard let samples = collectScaling(options) else { return 1 }
  let report = ScalingReport(options: options, samples: samples)
  return publish(markdown: report.markdown(), json: report.json(), to: options.jsonPath)
}

/// Measures every point in `repetitions` fresh processes each, interleaved so that drift hits
/// every size and contender alike; `nil` if a child failed.
func collectScaling(_ options: ScalingOptions) -> ScalingSamples? {
  var samples: ScalingSamples = [:]
  let executable = currentExecutable()
  for repetition in 1...options.repetitions {
    for curve in options.curves {
      for size in options.sizes(curve) {
        for implementation in options.implementations where curve.applies(to: implementation) {
          if options.showsProgress {
            printError("[\(repetition)/\(options.repetitions)] \(curve.rawValue) \(size) \(implementation.title)")
          }
          let command =
            "'\(executable)' scaling-child \(curve.rawValue) \(implementation.rawValue) \(size) --work \(options.work)"
          guard let sample = runChild(command) else { return nil }
          samples[curve, default: [:]][implementation, default: [:]][size, default: []].append(sample)
        }
      }
    }
  }
  return samples
}

/// The smoke check of the curves: Flux at 100 and 10,000, the fastest of 3 fresh processes per
/// point (noise on a shared machine only ever adds time). A curve whose cost per item at 10,000
/// is more than twice that at 100 is measured again with 5 processes per point, and fails only
/// if it grows too fast again.
func scalingSmoke() -> Bool {
  var options = ScalingOptions(
    repetitions: 3, implementations: [.flux], sizes: Curve.smokeSizes, showsProgress: false)
  var failures = 0
  for curve in Curve.allCases {
    options.curves = [curve]
    options.work = curve.smokeWork
    var attempt = 1
    while true {
      guard let samples = collectScaling(options) else {
        print("FAIL scaling \(curve.rawValue): a child failed")
        failures += 1
        break
      }
      let report = ScalingReport(options: options, samples: samples)
      let growth = report.growth(curve, .flux, fastest: true)
      let sizes = Curve.smokeSizes.map(String.init).joined(separator: ", ")
      let costs = Curve.smokeSizes.map { report.time(curve, .flux, $0).map { format($0.minimum, digits: 1) } ?? "–" }
      let line =
        "scaling \(curve.rawValue): ns/\(curve.unit) at \(sizes): \(costs.joined(separator: ", ")), "
        + "growth " + (growth.map { format($0, digits: 2) + "×" } ?? "–")
      if report.isLinear(curve, .flux, fastest: true) == true {
        print("ok   \(line)")
        break
      }
      if attempt == 2 {
        print("FAIL \(line), more than \(format(Curve.growthLimit, digits: 0))×")
        failures += 1
        break
      }
      print("again \(line)")
      attempt += 1
      options.repetitions = 5
    }
    options.repetitions = 3
  }
  print("\(Curve.allCases.count - failures) curves linear, \(failures) not")
  return failures == 0
}
