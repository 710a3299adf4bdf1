#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The medians of a run, as a Markdown table and as JSON.
struct Report {
  /// Median, minimum and maximum of some samples.
  struct Summary {
    let median: Double
    let minimum: Double
    let maximum: Double
    let values: [Double]

    init?(_ values: [Double]) {
      guard !values.isEmpty else { return nil }
      let sorted = values.sorted()
      let middle = sorted.count / 2
      median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
      minimum = sorted[0]
      maximum = sorted[sorted.count - 1]
      self.values = values
    }
  }

  let options: RunOptions
  let samples: [Workload: [Implementation: [Sample]]]
  let date = utcDate()
  let machine = machineDescription()

  func time(_ workload: Workload, _ implementation: Implementation) -> Summary? {
    Summary(samples[workload]?[implementation]?.map(\.nanoseconds) ?? [])
  }

  func allocations(_ workload: Workload, _ implementation: Implementation) -> Summary? {
    Summary(samples[workload]?[implementation]?.compactMap(\.allocations) ?? [])
  }

  func bytes(_ implementation: Implementation) -> Summary? {
    Summary(samples[.w9]?[implementation]?.compactMap(\.bytes) ?? [])
  }

  func ratio(_ workload: Workload, _ numerator: Implementation, _ denominator: Implementation) -> Double? {
    guard let top = time(workload, numerator)?.median, let bottom = time(workload, denominator)?.median,
      bottom > 0
    else { return nil }
    return top / bottom
  }

  /// Whether Flux meets the workload's targets; `nil` when something is missing.
  func isMet(_ workload: Workload) -> Bool? {
    if workload == .w9 {
      guard let bytes = bytes(.flux)?.median else { return nil }
      return bytes <= Workload.bytesPerObserverTarget
    }
    if let target = workload.ratioTarget {
      guard let ratio = ratio(workload, .flux, .baseline) else { return nil }
      guard ratio <= target else { return false }
    }
    guard let allowed = workload.allocationTarget else { return true }
    guard let allocations = allocations(workload, .flux)?.median else { return nil }
    return allocations <= allowed + 0.005
  }

  // MARK: Markdown

  func markdown() -> String {
    var lines = [
      "\(date) · \(machine) · medians of \(options.repetitions) fresh processes (min–max)",
      "",
      "| workload | unit | Flux ns | baseline ns | OpenCombine ns | @Observable ns | Flux/baseline | target "
        + "| OpenCombine/Flux | allocs/op Flux · baseline · OpenCombine · @Observable | met |",
      "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|:-:|",
    ]
    for workload in options.workloads {
      let columns = Implementation.allCases.map { cell(time(workload, $0)) }
      let allocationColumn = Implementation.allCases.map { implementation in
        allocations(workload, implementation).map { format($0.median, digits: 2) } ?? "–"
      }
      let target = workload.ratioTarget.map { "≤ " + format($0, digits: 1) + "×" } ?? "–"
      lines.append(
        "| \(workload.rawValue) \(workload.name) | ns/\(workload.unit) | "
          + columns.joined(separator: " | ")
          + " | \(ratioCell(ratio(workload, .flux, .baseline))) | \(target)"
          + " | \(ratioCell(ratio(workload, .openCombine, .flux)))"
          + " | \(allocationColumn.joined(separator: " · ")) | \(metCell(workload == .w9 ? nil : isMet(workload))) |"
      )
    }
    if options.workloads.contains(.w9) {
      let columns = Implementation.allCases.map { $0 == .observable ? "–" : cell(bytes($0)) }
      let fluxOverBaseline = bytes(.flux).flatMap { flux in bytes(.baseline).map { flux.median / $0.median } }
      let openCombineOverFlux = bytes(.openCombine).flatMap { other in bytes(.flux).map { other.median / $0.median } }
      lines.append(
        "| W9 memory | bytes/observer | " + columns.joined(separator: " | ")
          + " | \(ratioCell(fluxOverBaseline)) | ≤ \(Int(Workload.bytesPerObserverTarget)) B"
          + " | \(ratioCell(openCombineOverFlux)) | – | \(metCell(isMet(.w9))) |"
      )
    }
    return lines.joined(separator: "\n")
  }

  private func cell(_ summary: Summary?) -> String {
    guard let summary else { return "–" }
    let digits = summary.median < 100 ? 1 : 0
    return "\(format(summary.median, digits: digits)) (\(format(summary.minimum, digits: digits))–"
      + "\(format(summary.maximum, digits: digits)))"
  }

  private func ratioCell(_ ratio: Double?) -> String {
    ratio.map { format($0, digits: 2) + "×" } ?? "–"
  }

  private func metCell(_ met: Bool?) -> String {
    switch met {
    case true?: return "yes"
    case false?: return "**no**"
    case nil: return ""
    }
  }

  // MARK: JSON

  func json() -> String {
    var entries: [String] = []
    for workload in options.workloads {
      var fields = [
        "\"id\": \(quoted(workload.rawValue))",
        "\"name\": \(quoted(workload.name))",
        "\"unit\": \(quoted(workload.unit))",
      ]
      var results: [String] = []
      for implementation in Implementation.allCases {
        guard let time = time(workload, implementation) else { continue }
        var result = ["\"nanoseconds\": \(summaryJSON(time))"]
        if let allocations = allocations(workload, implementation) {
          result.append("\"allocations\": \(summaryJSON(allocations))")
        }
        if workload == .w9, let bytes = bytes(implementation) {
          result.append("\"bytes\": \(summaryJSON(bytes))")
        }
        results.append("\(quoted(implementation.rawValue)): {\(result.joined(separator: ", "))}")
      }
      fields.append("\"results\": {\(results.joined(separator: ", "))}")
      fields.append("\"fluxOverBaseline\": \(number(ratio(workload, .flux, .baseline)))")
      fields.append("\"openCombineOverFlux\": \(number(ratio(workload, .openCombine, .flux)))")
      fields.append("\"openCombineOverBaseline\": \(number(ratio(workload, .openCombine, .baseline)))")
      fields.append("\"ratioTarget\": \(number(workload.ratioTarget))")
      fields.append("\"allocationTarget\": \(number(workload.allocationTarget))")
      if workload == .w9 {
        fields.append("\"bytesTarget\": \(number(Workload.bytesPerObserverTarget))")
      }
      fields.append("\"met\": \(isMet(workload).map { $0 ? "true" : "false" } ?? "null")")
      entries.append("    {" + fields.joined(separator: ", ") + "}")
    }
    return """
      {
        "date": \(quoted(date)),
        "machine": \(quoted(machine)),
        "repetitions": \(options.repetitions),
        "rounds": \(options.rounds),
        "workloads": [
      \(entries.joined(separator: ",\n"))
        ]
      }

      """
  }

  private func summaryJSON(_ summary: Summary) -> String {
    let values = summary.values.map { number($0) }.joined(separator: ", ")
    return "{\"median\": \(number(summary.median)), \"min\": \(number(summary.minimum)), "
      + "\"max\": \(number(summary.maximum)), \"samples\": [\(values)]}"
  }
}

func number(_ value: Double?) -> String {
  guard let value, value.isFinite else { return "null" }
  return format(value, digits: 4)
}

func quoted(_ text: String) -> String {
  "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

extension String {
  fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
    split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}

/// `value` with `digits` decimals.
func format(_ value: Double, digits: Int) -> String {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let rounded = (value * scale).rounded() / scale
  var text = String(rounded)
  if text.hasSuffix(".0"), digits == 0 { text.removeLast(2) }
  if let dot = text.firstIndex(of: ".") {
    let decimals = text.distance(from: dot, to: text.endIndex) - 1
    if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
  } else if digits > 0 {
    text += "." + String(repeating: "0", count: digits)
  }
  if text.contains("e") { return String(value) }
  return text
}

/// The current date and time, UTC, as `2025-01-31 12:00 UTC`.
func utcDate() -> String {
  var seconds = time(nil)
  var parts = tm()
  gmtime_r(&seconds, &parts)
  func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
  return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
    + "\(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
}

/// The CPU model, core count, OS and toolchain (from `FLUX_BENCH_TOOLCHAIN`, set by run.sh).
func machineDescription() -> String {
  var parts: [String] = []
  if let model = cpuModel() { parts.append(model) }
  parts.append("\(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores")
  var name = utsname()
  uname(&name)
  let system = withUnsafeBytes(of: &name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
  let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
  parts.append("\(system) \(release)")
  if let toolchain = getenv("FLUX_BENCH_TOOLCHAIN") { parts.append(String(cString: toolchain)) }
  return parts.joined(separator: ", ")
}

private func cpuModel() -> String? {
  guard let file = fopen("/proc/cpuinfo", "r") else { return nil }
  defer { fclose(file) }
  var line = [CChar](repeating: 0, count: 1024)
  while fgets(&line, Int32(line.count), file) != nil {
    let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if text.hasPrefix("model name") {
      let value = text.split(separator: ":", maxSplits: 1).last ?? ""
      let cleaned = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
      return cleaned.joined(separator: " ")
    }
  }
  return nil
}
