import FluxCore
import FluxReactive

/// One list of the board: its name, and an identity that a list of the same name made later
/// does not share.
struct ListEntry: Codable, Equatable, Sendable {
  let id: Int
  let name: String
}

/// Which lists there are, and which one item commands work on.
struct Lists: Codable, Equatable, Sendable {
  var entries: [ListEntry]
  var current: String
  var nextID: Int

  init(first name: String) {
    entries = [ListEntry(id: 1, name: name)]
    current = name
    nextID = 2
  }
}

/// Everything that can happen to the set of lists. `Codable` for `--record` and `--replay`.
enum BoardAction: Codable, Equatable, Sendable {
  /// A new, empty list, which becomes the current one.
  case create(name: String)
  /// The list item commands work on.
  case use(name: String)
  /// The list goes; if it was the current one, the first list left becomes current.
  case drop(name: String)
  /// Every list goes, and empty lists of these names come, the first one current.
  case replace(names: [String])
}

/// The lists of the board: one store, whose state says which list stores exist.
final class BoardState: State, CustomStringConvertible {
  typealias Action = BoardAction
  typealias Mutations = BoardMutations

  fileprivate let lists: Variable<Lists>

  init(firstList: String) {
    lists = Variable(Lists(first: firstList))
  }

  /// What `--record` writes as the board's state after each commit.
  var recorded: Lists {
    lists.value
  }

  /// What `--log` prints after each commit.
  var description: String {
    let lists = lists.value
    return "Board(\(lists.entries.map(\.name).joined(separator: ", ")); current: \(lists.current))"
  }
}

/// The only code that changes the set of lists. The board checks a command before it
/// dispatches; an action that makes no sense here changes nothing.
struct BoardMutations: Mutations {
  func commit(action: BoardAction, state: BoardState) {
    state.lists.modify { lists in
      switch action {
      case .create(let name):
        lists.entries.append(ListEntry(id: lists.nextID, name: name))
        lists.nextID += 1
        lists.current = name
      case .use(let name):
        if lists.entries.contains(where: { $0.name == name }) { lists.current = name }
      case .drop(let name):
        guard lists.entries.count > 1 else { return }
        lists.entries.removeAll { $0.name == name }
        if lists.current == name { lists.current = lists.entries[0].name }
      case .replace(let names):
        guard let first = names.first else { return }
        lists.entries = names.enumerated().map { ListEntry(id: lists.nextID + $0, name: $1) }
        lists.nextID += names.count
        lists.current = first
      }
    }
  }
}

extension Actions where State == BoardState {
  func create(_ name: String) {
    dispatch(action: .create(name: name))
  }

  func use(_ name: String) {
    dispatch(action: .use(name: name))
  }

  func drop(_ name: String) {
    dispatch(action: .drop(name: name))
  }

  func replace(with names: [String]) {
    dispatch(action: .replace(names: names))
  }
}

extension Computed where State == BoardState {
  /// The lists and the current one, now and after every change.
  var lists: Constant<Lists> {
    state.lists.constant
  }
}
