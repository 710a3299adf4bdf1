import FluxCore
import FluxDevtools
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
}

// In an extension, so that `Lists` keeps its memberwise initializer: a test generated from a
// session writes a restore of the board with it.
extension Lists {
  init(first name: String) {
    self.init(entries: [ListEntry(id: 1, name: name)], current: name, nextID: 2)
  }
}

/// Everything that can happen to the set of lists. `Codable` for `--record` and `--replay`.
///
/// Whatever action arrives (a replay, a global dispatch and a test send actions without the
/// command layer), the board stays valid: at least one list, no two lists whose names differ
/// only in case, a current list that exists, and names without control characters. An action
/// that would break that changes nothing, or as little as it must, as each case says.
enum BoardAction: Codable, Equatable, Sendable {
  /// A new, empty list, which becomes the current one. A name that a list has already (in any
  /// case), or an empty one, changes nothing.
  case create(name: String)
  /// The list item commands work on; a name no list has changes nothing.
  case use(name: String)
  /// Every list of this name goes; if the current one went, the first list left becomes
  /// current. A drop that would leave no list changes nothing.
  case drop(name: String)
  /// Every list goes, and empty lists of these names come, the first one current. A name
  /// that comes again (in any case) after its first time, or an empty one, is left out; no
  /// name at all changes nothing.
  case replace(names: [String])
  /// The lists become `lists`, ids and all: a snapshot to go back to. An entry whose name is
  /// empty, or comes again (in any case), or whose id comes again, is left out; if none is left,
  /// nothing changes. A current list that is not there becomes the first; the next id follows
  /// every id there.
  case restore(lists: Lists)
}

/// The lists of the board: one store, whose state says which list stores exist.
final class BoardState: State, Snapshotting, CustomStringConvertible {
  typealias Action = BoardAction
  typealias Mutations = BoardMutations

  fileprivate let lists: Variable<Lists>

  init(firstList: String) {
    lists = Variable(Lists(first: firstList))
  }

  /// The lists, for `--record` and time travel.
  var snapshot: Lists {
    lists.value
  }

  /// Sets the lists back to a snapshot, through a commit like any other.
  static func restore(_ snapshot: Lists) -> BoardAction {
    .restore(lists: snapshot)
  }

  /// What `--log` prints after each commit.
  var description: String {
    let lists = lists.value
    return "Board(\(lists.entries.map(\.name).joined(separator: ", ")); current: \(lists.current))"
  }
}

/// The only code that changes the set of lists. The board checks a command before it
/// dispatches; an action that makes no sense here changes nothing (see ``BoardAction``).
struct BoardMutations: Mutations {
  func commit(action: BoardAction, state: BoardState) {
    state.lists.modify { lists in
      switch action {
      case .create(let name):
        let name = ListName.clean(name)
        guard !name.isEmpty, !lists.entries.contains(where: { ListName.same($0.name, name) }) else { return }
        lists.entries.append(ListEntry(id: lists.nextID, name: name))
        lists.nextID += 1
        lists.current = name
      case .use(let name):
        if lists.entries.contains(where: { $0.name == name }) { lists.current = name }
      case .drop(let name):
        guard lists.entries.contains(where: { $0.name != name }) else { return }
        lists.entries.removeAll { $0.name == name }
        if !lists.entries.contains(where: { $0.name == lists.current }) { lists.current = lists.entries[0].name }
      case .replace(let names):
        var unique: [String] = []
        var seen: Set<String> = []
        for name in names.map(ListName.clean) where !name.isEmpty && seen.insert(ListName.key(name)).inserted {
          unique.append(name)
        }
        guard let first = unique.first else { return }
        lists.entries = unique.enumerated().map { ListEntry(id: lists.nextID + $0, name: $1) }
        lists.nextID += unique.count
        lists.current = first
      case .restore(let restored):
        // One pass: the ids and names kept so far are sets, so a board of many lists restores in
        // time that grows with their number, not its square.
        var entries: [ListEntry] = []
        var ids: Set<Int> = []
        var keys: Set<String> = []
        for entry in restored.entries {
          let name = ListName.clean(entry.name)
          guard !name.isEmpty, !ids.contains(entry.id), keys.insert(ListName.key(name)).inserted else { continue }
          ids.insert(entry.id)
          entries.append(ListEntry(id: entry.id, name: name))
        }
        guard let first = entries.first else { return }
        lists.entries = entries
        lists.current = entries.contains { $0.name == restored.current } ? restored.current : first.name
        let largest = entries.map(\.id).max() ?? 0
        lists.nextID = largest < Int.max ? max(restored.nextID, largest + 1) : Int.max
      }
    }
  }
}

/// The rules for a list's name.
enum ListName {
  /// Whether two names are of one list: names differ in more than case.
  static func same(_ first: String, _ second: String) -> Bool {
    key(first) == key(second)
  }

  /// What two names of one list share (``same(_:_:)``): to find a name among many in one step.
  static func key(_ name: String) -> String {
    name.lowercased()
  }

  /// `name` as a list may have it: each control character (a line break, a tab, an escape)
  /// becomes a space, and the spaces at its ends go.
  static func clean(_ name: String) -> String {
    Title.clean(name)
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
