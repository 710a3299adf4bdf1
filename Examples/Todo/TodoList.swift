import FluxCore
import FluxDevtools
import FluxReactive

/// One item of a todo list. Its title holds no control character: `add` and `edit` refuse one,
/// and a mutation turns each that an action brings (by replay, say) into a space. The ids of a
/// list's items increase along it.
struct TodoItem: Codable, Equatable, Sendable {
  let id: Int
  var title: String
  var isDone: Bool
}

/// Everything that can happen to one list. `Codable` for `--record` and `--replay`.
enum TodoAction: Codable, Equatable, Sendable {
  case add(title: String)
  case setDone(id: Int, isDone: Bool)
  case rename(id: Int, title: String)
  case remove(id: Int)
  case clearCompleted
  /// The items become `items`: what `load` read, or a snapshot to go back to.
  case restore(items: [TodoItem])
}

/// The state of one list. Each list has a store of its own; `Store<TodoListState>.actions`
/// reaches all of them at once.
///
/// The items are `fileprivate`: only ``TodoMutations`` changes them and only the `Computed`
/// extension below publishes them.
final class TodoListState: State, Snapshotting, CustomStringConvertible {
  typealias Action = TodoAction
  typealias Mutations = TodoMutations

  let name: String
  fileprivate let items = Variable<[TodoItem]>([])

  init(name: String) {
    self.name = name
  }

  /// What `--log` prints after each commit.
  var description: String {
    "\(name)(\(summary(of: items.value)))"
  }

  /// The items, for time travel.
  var snapshot: [TodoItem] {
    items.value
  }

  /// Sets the items back to a snapshot, through a commit like any other.
  static func restore(_ snapshot: [TodoItem]) -> TodoAction {
    .restore(items: snapshot)
  }
}

/// The only code that changes a list.
struct TodoMutations: Mutations {
  func commit(action: TodoAction, state: TodoListState) {
    // One atomic read-modify-write: observers see one change per action.
    state.items.modify { items in
      switch action {
      case .add(let title):
        // Ids increase along the list (see `restore`): the next one follows the last.
        let id = (items.last?.id ?? 0) + 1
        items.append(TodoItem(id: id, title: Title.clean(title), isDone: false))
      case .setDone(let id, let isDone):
        if let index = items.firstIndex(where: { $0.id == id }) { items[index].isDone = isDone }
      case .rename(let id, let title):
        if let index = items.firstIndex(where: { $0.id == id }) { items[index].title = Title.clean(title) }
      case .remove(let id):
        items.removeAll { $0.id == id }
      case .clearCompleted:
        #if TODO_WRONG_MUTATION
          // Deliberately wrong, built only by the end-to-end check of session tests
          // (`.ci/session-test`, with TODO_WRONG_MUTATION set): the last done item stays.
          let kept = items.lastIndex(where: \.isDone)
          items = items.indices.filter { !items[$0].isDone || $0 == kept }.map { items[$0] }
        #else
          items.removeAll(where: \.isDone)
        #endif
      case .restore(let restored):
        // Ids increase along the list; restored items whose ids do not are numbered from 1.
        let isIncreasing = zip(restored, restored.dropFirst()).allSatisfy { $0.id < $1.id }
        items = restored.enumerated().map { index, item in
          TodoItem(id: isIncreasing ? item.id : index + 1, title: Title.clean(item.title), isDone: item.isDone)
        }
      }
    }
  }
}

extension Actions where State == TodoListState {
  func add(_ title: String) {
    dispatch(action: .add(title: title))
  }

  func setDone(_ id: Int, _ isDone: Bool) {
    dispatch(action: .setDone(id: id, isDone: isDone))
  }

  func rename(_ id: Int, to title: String) {
    dispatch(action: .rename(id: id, title: title))
  }

  func remove(_ id: Int) {
    dispatch(action: .remove(id: id))
  }

  func clearCompleted() {
    dispatch(action: .clearCompleted)
  }
}

extension Computed where State == TodoListState {
  var name: String {
    state.name
  }

  /// The items as they are now, for commands that name an item by its number.
  var items: Constant<[TodoItem]> {
    state.items.constant
  }

  /// The items, now and after every change.
  var itemChanges: Signal<[TodoItem]> {
    state.items.signal
  }
}

extension TodoItem {
  /// The item's line in a list: `2. [x] Eggs`.
  func row(number: Int) -> String {
    "\(number). [\(isDone ? "x" : " ")] \(title)"
  }
}

/// The rule for titles and names: no control characters.
enum Title {
  /// Whether `text` holds a control character: a line break, a tab, an escape.
  static func hasControlCharacter(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.properties.generalCategory == .control }
  }

  /// `text` with each control character turned into a space, and the spaces at its ends gone.
  static func clean(_ text: String) -> String {
    guard hasControlCharacter(text) else { return text }
    let scalars = text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }
    return String(String.UnicodeScalarView(scalars)).trimmingCharacters(in: .whitespaces)
  }
}

/// "2 of 5 done", or "empty".
func summary(of items: [TodoItem]) -> String {
  items.isEmpty ? "empty" : "\(items.count(where: \.isDone)) of \(items.count) done"
}
