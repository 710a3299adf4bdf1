import Dispatch
import FluxCore
import FluxDevtools

/// The cost of an `ActionLog` with `snapshots: .mirror` over the size of the state: for states
/// of 1 to 1,000 items, what one logged action costs the committing thread (which reads the state
/// through `Mirror`), and what it costs end to end (the dispatches, then `flush()`: every line
/// encoded and written), in one process.
///
/// `--actions N` runs N actions per size, once, without warm-up rounds: two runs of different N
/// under `valgrind --tool=callgrind --separate-threads=yes` give the instructions of one action
/// on each thread, the process's start and exit subtracted.
enum MirrorCurve {
  static let sizes = [1, 10, 100, 1_000]

  static func main(_ arguments: ArraySlice<String>) -> Int32 {
    func option(_ name: String) -> String? {
      guard let index = arguments.firstIndex(of: name), arguments.index(after: index) < arguments.endIndex
      else { return nil }
      return arguments[arguments.index(after: index)]
    }
    let sizes = option("--sizes").map { $0.split(separator: ",").compactMap { Int($0) } } ?? Self.sizes
    let fixed = option("--actions").flatMap { Int($0) }.map { max(1, min($0, 1_000_000)) }
    print("| items | actions | commit-thread ns/action | end-to-end ns/action | bytes/line |")
    print("|--:|--:|--:|--:|--:|")
    for size in sizes where size >= 0 && size <= 100_000 {
      let actions = fixed ?? max(20, min(2_000, 200_000 / max(1, size)))
      let result = measure(items: size, actions: actions, rounds: fixed == nil ? 3 : 1)
      print(
        "| \(size) | \(actions) | \(format(result.committing)) | \(format(result.endToEnd)) | \(result.bytesPerLine) |")
    }
    return 0
  }

  private static func format(_ value: Double) -> String {
    LoggedBurst.format(value)
  }

  /// Nanoseconds per action on the committing thread and end to end, the best of `rounds`.
  static func measure(items: Int, actions: Int, rounds: Int) -> (
    committing: Double, endToEnd: Double, bytesPerLine: Int
  ) {
    let result = LoggedBurst.measure(
      rounds: rounds, actions: actions, label: "shelf", snapshots: .mirror,
      makeStore: { ShelfState(items: items) }, mutations: ShelfMutations(), action: { .touch($0) })
    return (result.committing, result.endToEnd, result.bytesPerLine)
  }
}

/// A small app's state that is not `Encodable`: a title, a filter, an optional note and `items`
/// items, each a struct with an enum.
private final class ShelfState: State, @unchecked Sendable {
  // `@unchecked Sendable`: touched only by the store's commits and hooks, on the one thread that
  // dispatches to it (`.immediate`).
  typealias Action = ShelfAction
  typealias Mutations = ShelfMutations

  enum Filter {
    case all, done, open
  }

  enum Mark {
    case none
    case flagged(by: String)
  }

  struct Item {
    var id: Int
    var title: String
    var done: Bool
    var mark: Mark
  }

  var title = "Shelf"
  var filter = Filter.all
  var note: String? = nil
  var touched = 0
  var items: [Item]

  init(items: Int) {
    self.items = (0..<items).map { Item(id: $0, title: "Item \($0)", done: false, mark: .none) }
  }
}

private enum ShelfAction: Codable, Sendable {
  case touch(Int)
}

private struct ShelfMutations: Mutations {
  func commit(action: ShelfAction, state: ShelfState) {
    switch action {
    case .touch(let index):
      state.touched &+= 1
      if !state.items.isEmpty { state.items[index % state.items.count].done.toggle() }
    }
  }
}
