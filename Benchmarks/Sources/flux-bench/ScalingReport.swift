/// The medians of a scaling run, as Markdown tables and as JSON.
struct ScalingReport {
  let options: ScalingOptions
  let samples: ScalingSamples
  let date = utcDate()
  let machine = machineDescription()

  /// Nanoseconds per item of `curve` at `size`.
  func time(_ curve: Curve, _ implementation: Implementation, _ size: Int) -> Report.Summary? {
    Report.Summary(samples[curve]?[implementation]?[size]?.map(\.nanoseconds) ?? [])
  }

  /// Resident bytes per item of `curve` at `size`: per standing observer of the churn curve,
  /// per live store of the global-dispatch curve.
  func bytes(_ curve: Curve, _ implementation: Implementation, _ size: Int) -> Report.Summary? {
    Report.Summary(samples[curve]?[implementation]?[size]?.compactMap(\.bytes) ?? [])
  }

  /// The cost per item at the largest size over that at 100: of the medians, or of the
  /// fastest processes (noise on a shared machine only ever adds time).
  func growth(_ curve: Curve, _ implementation: Implementation, fastest: Bool = false) -> Double? {
    let statistic: (Report.Summary) -> Double = fastest ? { $0.minimum } : { $0.median }
    guard let largest = options.sizes(curve).last, largest > Curve.referenceSize,
      let top = time(curve, implementation, largest).map(statistic),
      let bottom = time(curve, implementation, Curve.referenceSize).map(statistic), bottom > 0
    else { return nil }
    return top / bottom
  }

  /// Whether the curve grows no faster than linear; `nil` when something is missing.
  func isLinear(_ curve: Curve, _ implementation: Implementation, fastest: Bool = false) -> Bool? {
    growth(curve, implementation, fastest: fastest).map { $0 <= Curve.growthLimit }
  }

  private var allSizes: [Int] {
    Array(Set(options.curves.flatMap { options.sizes($0) })).sorted()
  }

  // MARK: Markdown

  func markdown() -> String {
    let sizes = allSizes
    var lines = [
      "\(date) · \(machine) · medians of \(options.repetitions) fresh processes per point",
      "",
      "| curve | size is | contender | ns per | " + sizes.map(sizeLabel).joined(separator: " | ")
        + " | largest ÷ 100 | linear |",
      "|---|---|---|---|" + String(repeating: "--:|", count: sizes.count) + "--:|:-:|",
    ]
    for curve in options.curves {
      for implementation in options.implementations where curve.applies(to: implementation) {
        let cells = sizes.map { size in
          time(curve, implementation, size).map { nanoseconds($0.median) } ?? ""
        }
        let growth = growth(curve, implementation).map { format($0, digits: 2) + "×" } ?? "–"
        let linear = isLinear(curve, implementation).map { $0 ? "yes" : "**no**" } ?? ""
        lines.append(
          "| \(curve.name) | \(curve.sizeName) | \(implementation.title) | \(curve.unit) | "
            + cells.joined(separator: " | ") + " | \(growth) | \(linear) |")
      }
    }
    let extras = extraRows()
    if !extras.isEmpty {
      lines += ["", "| at the largest size | " + options.implementations.map(\.title).joined(separator: " | ") + " |"]
      lines.append("|---|" + String(repeating: "--:|", count: options.implementations.count))
      lines += extras
    }
    return lines.joined(separator: "\n")
  }

  private func extraRows() -> [String] {
    var rows: [String] = []
    for (curve, item) in [(Curve.churn, "observer"), (.global, "store")] where options.curves.contains(curve) {
      guard let largest = options.sizes(curve).last, largest >= 100_000 else { continue }
      let cells = options.implementations.map { bytes(curve, $0, largest).map { format($0.median, digits: 1) } ?? "–" }
      rows.append(
        "| bytes per \(item), \(count(largest)) \(curve.sizeName) | " + cells.joined(separator: " | ") + " |")
    }
    for curve in [Curve.queue, .main] where options.curves.contains(curve) {
      guard let largest = options.sizes(curve).last else { continue }
      let cells = options.implementations.map { implementation in
        time(curve, implementation, largest).map { actionsPerSecond($0.median) } ?? "–"
      }
      rows.append("| actions/s, \(curve.name), \(count(largest)) actions | " + cells.joined(separator: " | ") + " |")
    }
    return rows
  }

  private func sizeLabel(_ size: Int) -> String {
    switch size {
    case 1_000_000...: return "\(size / 1_000_000)M"
    case 1_000...: return "\(size / 1_000)k"
    default: return "\(size)"
    }
  }

  private func count(_ size: Int) -> String {
    var digits = Array(String(size))
    var index = digits.count - 3
    while index > 0 {
      digits.insert(",", at: index)
      index -= 3
    }
    return String(digits)
  }

  private func nanoseconds(_ value: Double) -> String {
    format(value, digits: value < 10 ? 2 : value < 100 ? 1 : 0)
  }

  private func actionsPerSecond(_ nanoseconds: Double) -> String {
    guard nanoseconds > 0 else { return "–" }
    return format(1_000 / nanoseconds, digits: 2) + " M"
  }

  // MARK: JSON

  func json() -> String {
    var entries: [String] = []
    for curve in options.curves {
      var results: [String] = []
      for implementation in options.implementations where curve.applies(to: implementation) {
        var points: [String] = []
        for size in options.sizes(curve) {
          guard let time = time(curve, implementation, size) else { continue }
          var fields = ["\"size\": \(size)", "\"nanoseconds\": \(summaryJSON(time))"]
          if size >= 100_000, let bytes = bytes(curve, implementation, size) {
            fields.append("\"bytes\": \(summaryJSON(bytes))")
          }
          points.append("{" + fields.joined(separator: ", ") + "}")
        }
        let linear = isLinear(curve, implementation).map { $0 ? "true" : "false" } ?? "null"
        results.append(
          "\(quoted(implementation.rawValue)): {\"growth\": \(number(growth(curve, implementation))), "
            + "\"linear\": \(linear), \"points\": [\(points.joined(separator: ", "))]}")
      }
      let fields = [
        "\"id\": \(quoted(curve.rawValue))",
        "\"name\": \(quoted(curve.name))",
        "\"sizeName\": \(quoted(curve.sizeName))",
        "\"unit\": \(quoted(curve.unit))",
        "\"results\": {\(results.joined(separator: ", "))}",
      ]
      entries.append("    {" + fields.joined(separator: ", ") + "}")
    }
    return """
      {
        "date": \(quoted(date)),
        "machine": \(quoted(machine)),
        "repetitions": \(options.repetitions),
        "referenceSize": \(Curve.referenceSize),
        "growthLimit": \(number(Curve.growthLimit)),
        "curves": [
      \(entries.joined(separator: ",\n"))
        ]
      }

      """
  }

  private func summaryJSON(_ summary: Report.Summary) -> String {
    let values = summary.values.map { number($0) }.joined(separator: ", ")
    return "{\"median\": \(number(summary.median)), \"min\": \(number(summary.minimum)), "
      + "\"max\": \(number(summary.maximum)), \"samples\": [\(values)]}"
  }
}
