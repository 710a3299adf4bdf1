import Dispatch
import FluxCore
import FluxDevtools

/// The cost of an `ActionLog` with snapshots over the size of the state: for states of 10 to
/// 100,000 items, what one logged action costs the committing thread, and what it costs end to
/// end (the dispatches, then `flush()`: every line encoded and written), in one process.
///
/// Two actions per size: `count`, which changes a counter beside the items (the snapshot shares
/// the items' buffer with the state), and `touch`, which changes one item (the state's array is
/// copied on write while a queued snapshot holds it: the price of keeping the snapshot as a value).
/// `touch` is measured twice: in a burst (every action dispatched at once, so that earlier
/// snapshots wait in the queue), and paced (each action dispatched 1 ms after the log has
/// written the line before it, the wait untimed: no earlier snapshot holds the items' buffer, so
/// nothing is copied, and the log's drainer lingers), which is what an app whose actions come
/// slower than the log writes them sees. `count` is measured paced too, and after the log has
/// been idle (a pause of 1.2 s, past the drainer's linger, so that each line wakes a thread; its lingers,
/// finding nothing, soon stop), and
/// paced without a log, for comparison: a thread that wakes from a pause finds its caches cold,
/// the colder the busier the machine.
enum LogCurve {
  static let sizes = [10, 100, 1_000, 10_000, 100_000]

  static func main(_ arguments: ArraySlice<String>) -> Int32 {
    let sizes =
      arguments.firstIndex(of: "--sizes").flatMap { index in
        arguments.index(after: index) < arguments.endIndex
          ? arguments[arguments.index(after: index)].split(separator: ",").compactMap { Int($0) } : nil
      } ?? Self.sizes
    print(
      "| items | actions | commit-thread ns/action (count) | (touch) | (touch, paced) | (count, paced) | (count, paced, no log) | (count, after idle) "
        + "| end-to-end ns/action (count) "
        + "| (touch) | lines/s end to end (count) | bytes/line |"
    )
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for size in sizes where size > 0 && size <= 1_000_000 {
      let actions = max(20, min(20_000, 4_000_000 / size))
      let count = measure(items: size, actions: actions, touch: false)
      let touch = measure(items: size, actions: actions, touch: true)
      let pacedActions = max(20, min(500, 400_000 / size))
      let paced = measurePaced(items: size, actions: pacedActions, touch: true)
      let pacedCount = measurePaced(items: size, actions: pacedActions, touch: false)
      let unlogged = measurePaced(items: size, actions: pacedActions, touch: false, logged: false)
      let idle = measure(items: size, actions: 4, touch: false, rounds: 1, pause: 1.2)
      print(
        "| \(size) | \(actions) | \(format(count.committing)) | \(format(touch.committing)) | \(paced) | \(pacedCount) | \(unlogged) | \(format(idle.median)) (\(format(idle.committing))) "
          + "| \(format(count.endToEnd)) "
          + "| \(format(touch.endToEnd)) | \(format(1e9 / count.endToEnd)) | \(count.bytesPerLine) |")
    }
    return 0
  }

  private static func format(_ value: Double) -> String {
    LoggedBurst.format(value)
  }

  /// Nanoseconds per action on the committing thread, each dispatched 1 ms after the log has
  /// written every earlier line (not timed): the median, and the mean in brackets, the best of
  /// three rounds.
  static func measurePaced(items: Int, actions: Int, touch: Bool, logged: Bool = true) -> String {
    let result = measure(items: items, actions: actions, touch: touch, pause: 0.001, logged: logged)
    return "\(format(result.median)) (\(format(result.committing)))"
  }

  /// Nanoseconds per action on the committing thread and end to end, the best of `rounds`.
  static func measure(
    items: Int, actions: Int, touch: Bool, rounds: Int = 3, pause: Double? = nil, logged: Bool = true
  ) -> (
    committing: Double, median: Double, endToEnd: Double, bytesPerLine: Int
  ) {
    LoggedBurst.measure(
      rounds: rounds, actions: actions, pause: pause, logged: logged, label: "items", snapshots: .snapshot,
      makeStore: { ItemsState(items: items) }, mutations: ItemsMutations(),
      action: { touch ? .touch($0 % items) : .count })
  }
}

/// A state of `items` items, its snapshot the items as a value.
final class ItemsState: State, Snapshotting, @unchecked Sendable {
  // `@unchecked Sendable`: touched only by the store's commits and hooks, on the one thread that
  // dispatches to it (`.immediate`).
  typealias Action = ItemsAction
  typealias Mutations = ItemsMutations

  struct Item: Codable, Sendable {
    var id: Int
    var title: String
    var done: Bool
  }

  struct Snapshot: Codable, Sendable {
    var count: Int
    var items: [Item]
  }

  var count = 0
  var items: [Item]

  init(items: Int) {
    self.items = (0..<items).map { Item(id: $0, title: "Item \($0)", done: false) }
  }

  var snapshot: Snapshot { Snapshot(count: count, items: items) }

  static func restore(_ snapshot: Snapshot) -> ItemsAction { .count }
}

enum ItemsAction: Codable, Sendable {
  case count
  case touch(Int)
}

struct ItemsMutations: Mutations {
  func commit(action: ItemsAction, state: ItemsState) {
    switch action {
    case .count: state.count &+= 1
    case .touch(let index): state.items[index].done.toggle()
    }
  }
}
