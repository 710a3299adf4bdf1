/// The word a mistyped one most likely meant, for "did you mean …?".
enum Suggestion {
  /// "did you mean show?", with each word near `word` (in quotes when `quoted`), or `nil` when
  /// none is near.
  static func didYouMean(_ word: String, among candidates: [String], quoted: Bool = false) -> String? {
    let near = words(near: word, among: candidates).map { quoted ? "\"\($0)\"" : $0 }
    return near.isEmpty ? nil : "did you mean \(near.joined(separator: " or "))?"
  }

  /// The words of `candidates` closest to `word`, in their order: those one edit away (a letter
  /// added, left out, changed, or two neighbours swapped), or two for a word of more than three
  /// letters; else those that `word`, of two letters or more (dashes aside), begins. Empty when
  /// none is close.
  static func words(near word: String, among candidates: [String]) -> [String] {
    let typed = Array(word.lowercased())
    let allowed = typed.count > 3 ? 2 : 1
    var best = allowed + 1
    var closest: [String] = []
    for candidate in candidates {
      let distance = editDistance(typed, Array(candidate), atMost: allowed)
      if distance > allowed { continue }
      if distance < best {
        best = distance
        closest = [candidate]
      } else if distance == best {
        closest.append(candidate)
      }
    }
    if !closest.isEmpty { return closest }
    guard typed.count(where: { $0 != "-" }) >= 2 else { return [] }
    return candidates.filter { $0.hasPrefix(String(typed)) }
  }

  /// The edits (a letter added, left out or changed, or two neighbours swapped) that make
  /// `first` into `second`, or `limit + 1` when more than `limit` are needed. Words longer than
  /// a command are not compared: a line of text is no typo of one.
  static func editDistance(_ first: [Character], _ second: [Character], atMost limit: Int) -> Int {
    guard abs(first.count - second.count) <= limit, first.count <= 64, second.count <= 64 else { return limit + 1 }
    if first.isEmpty || second.isEmpty { return min(first.count + second.count, limit + 1) }
    // The optimal string alignment distance, row by row: `previous` is the row above `current`,
    // `before` the one above that (for swaps).
    var before = [Int](repeating: 0, count: second.count + 1)
    var previous = Array(0...second.count)
    var current = [Int](repeating: 0, count: second.count + 1)
    for i in 1...first.count {
      current[0] = i
      for j in 1...second.count {
        let cost = first[i - 1] == second[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, first[i - 1] == second[j - 2], first[i - 2] == second[j - 1] {
          current[j] = min(current[j], before[j - 2] + 1)
        }
      }
      (before, previous, current) = (previous, current, before)
    }
    return min(previous[second.count], limit + 1)
  }
}
