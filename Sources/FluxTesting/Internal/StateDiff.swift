import Foundation

/// The difference between a state a session recorded and a store's state now: both as JSON
/// values, shown side by side.
enum StateDiff {
  /// The width of each side of the diff.
  static let columnWidth = 60
  /// Beyond this many lines on a side, lines are paired by position rather than matched.
  static let matchLimit = 2000

  /// Why `actual` is not the state `recorded` holds, with both side by side; `nil` when it is.
  static func difference(recorded: String, actual: some Encodable) -> String? {
    let expected: JSONValue
    do {
      expected = try JSONValue.parse(recorded)
    } catch {
      return "the recorded state is not JSON: \(error.message)"
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // As the log writes them (see ``ActionLog``).
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    let found: JSONValue
    do {
      found = try JSONValue.parse(String(decoding: try encoder.encode(actual), as: UTF8.self))
    } catch let error as JSONValue.Failure {
      return "the state cannot be read back as JSON: \(error.message)"
    } catch {
      return "the state cannot be encoded: \(error)"
    }
    guard found != expected else { return nil }
    let recordedLines = expected.lines(width: columnWidth, breakingTop: true)
    let actualLines = found.lines(width: columnWidth, breakingTop: true)
    return "the state is not as recorded\n" + sideBySide(recordedLines, actualLines)
  }

  /// The lines of both sides, matched (the longest run of equal lines in order), each pair on a
  /// row: `~` where they differ, `-` for a line only recorded, `+` for one only in the actual state.
  static func sideBySide(_ left: [String], _ right: [String]) -> String {
    var rows = ["    " + padded("recorded") + "   actual"]
    for (mark, recorded, actual) in pairs(left, right) {
      rows.append("  \(mark) " + padded(recorded ?? "") + (mark == " " ? "   " : " | ") + (actual ?? ""))
    }
    return rows.map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }.joined(separator: "\n")
  }

  private static func padded(_ text: String) -> String {
    let cut = text.count > columnWidth ? String(text.prefix(columnWidth - 1)) + "…" : text
    return cut + String(repeating: " ", count: columnWidth - cut.count)
  }

  /// The rows of the diff: lines that match side by side, and between them, the lines that do
  /// not, paired in order while both sides have some.
  static func pairs(_ left: [String], _ right: [String]) -> [(Character, String?, String?)] {
    let matches = matching(left, right)
    var rows: [(Character, String?, String?)] = []
    var (i, j) = (0, 0)
    func unmatched(until end: (Int, Int)) {
      while i < end.0 || j < end.1 {
        switch (i < end.0, j < end.1) {
        case (true, true): rows.append(("~", left[i], right[j]))
        case (true, false): rows.append(("-", left[i], nil))
        default: rows.append(("+", nil, right[j]))
        }
        if i < end.0 { i += 1 }
        if j < end.1 { j += 1 }
      }
    }
    for match in matches {
      unmatched(until: match)
      rows.append((" ", left[i], right[j]))
      i += 1
      j += 1
    }
    unmatched(until: (left.count, right.count))
    return rows
  }

  /// The pairs of equal lines of a longest common subsequence (a comma at the end of a line does
  /// not count: an element that became the last is the same element); none when either side is
  /// longer than ``matchLimit`` (the table would grow with the square of it).
  private static func matching(_ left: [String], _ right: [String]) -> [(Int, Int)] {
    let left = left.map(withoutComma)
    let right = right.map(withoutComma)
    guard left.count <= matchLimit, right.count <= matchLimit else { return [] }
    let (n, m) = (left.count, right.count)
    // lengths[i][j]: the longest common subsequence of left[i...] and right[j...].
    var lengths = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
    for i in stride(from: n - 1, through: 0, by: -1) {
      for j in stride(from: m - 1, through: 0, by: -1) {
        lengths[i][j] = left[i] == right[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
      }
    }
    var matches: [(Int, Int)] = []
    var (i, j) = (0, 0)
    while i < n && j < m {
      if left[i] == right[j] {
        matches.append((i, j))
        i += 1
        j += 1
      } else if lengths[i + 1][j] >= lengths[i][j + 1] {
        i += 1
      } else {
        j += 1
      }
    }
    return matches
  }

  private static func withoutComma(_ line: String) -> Substring {
    line.hasSuffix(",") ? line.dropLast() : line[...]
  }
}
