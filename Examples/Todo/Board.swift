import FluxCore
import FluxReactive
import Foundation

/// The app: a store per list, a store for saving, and the terminal views bound to them.
///
/// Threading: every store commits on `.mainThread`, and bindings use their default,
/// `.mainThread`. The program runs its command loop on the main actor (its `main` is `async`),
/// and on the main queue `.mainThread` work with nothing waiting runs inline: a command's
/// actions are committed, and its views updated, before the command returns. The save runs as
/// an async action; its steps are committed on the main queue while the command loop awaits it.
@MainActor
final class Board {
  /// One list: its store, and the view its bindings keep up to date.
  private struct List {
    let store: Store<TodoListState>
    let view: ListView
  }

  private var lists: [List] = []
  private var currentName: String
  private let saving = Store<SaveState>(state: .init(), mutations: .init(), executor: .mainThread)
  private let statusLine = StatusLine()
  private let defaultFolder: URL

  /// The name of the list that item commands work on.
  var current: String { currentName }

  init(firstList: String, defaultFolder: URL) {
    self.currentName = firstList
    self.defaultFolder = defaultFolder
    saving.computed.statusLine.bind(to: statusLine, \.message)
    addList(named: firstList)
  }

  /// Runs `command` and returns what to show, or throws what is wrong and changes nothing.
  func run(_ command: Command) async throws(CommandError) -> String? {
    switch command {
    case .help:
      return Terminal.help
    case .lists:
      return overview
    case .show:
      return Terminal.render(currentList.view)
    case .quit:
      return nil
    case .new(let name):
      guard list(named: name) == nil else { throw CommandError("there is already a list named \"\(name)\"") }
      addList(named: name)
      currentName = name
      return Terminal.render(currentList.view)
    case .use(let name):
      currentName = try existing(name).view.name
      return Terminal.render(currentList.view)
    case .drop(let name):
      return try drop(existing(name))
    case .add(let title):
      currentList.store.actions.add(title)
      return Terminal.render(currentList.view)
    case .done(let number):
      let item = try item(number)
      guard !item.isDone else { throw CommandError("item \(number) is done already") }
      currentList.store.actions.setDone(item.id, true)
      return Terminal.render(currentList.view)
    case .undo(let number):
      let item = try item(number)
      guard item.isDone else { throw CommandError("item \(number) is not done") }
      currentList.store.actions.setDone(item.id, false)
      return Terminal.render(currentList.view)
    case .edit(let number, let title):
      currentList.store.actions.rename(try item(number).id, to: title)
      return Terminal.render(currentList.view)
    case .remove(let number):
      currentList.store.actions.remove(try item(number).id)
      return Terminal.render(currentList.view)
    case .clear:
      guard currentList.view.doneCount > 0 else { throw CommandError("no item of \(currentName) is done") }
      currentList.store.actions.clearCompleted()
      return Terminal.render(currentList.view)
    case .clearAll:
      return try clearAll()
    case .save(let path):
      let folder = path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? defaultFolder
      let snapshots = lists.map { ListSnapshot(name: $0.view.name, items: $0.store.computed.items.value) }
      await saving.actions.save(snapshots, to: folder)
      return nil
    }
  }

  // MARK: Lists

  private func addList(named name: String) {
    let store = Store<TodoListState>(state: .init(name: name), mutations: .init(), executor: .mainThread)
    let view = ListView()
    view.name = store.computed.name
    // KeyPath bindings: each computed signal keeps one property of the view up to date, until
    // the view is freed.
    store.computed.rows.bind(to: view, \.rows)
    store.computed.progress.bind(to: view, \.progress)
    store.computed.doneCount.bind(to: view, \.doneCount)
    lists.append(List(store: store, view: view))
  }

  private func drop(_ list: List) throws(CommandError) -> String {
    guard lists.count > 1 else {
      throw CommandError("\(list.view.name) is the only list; create another one before dropping it")
    }
    // Dropping the store frees it: global actions no longer reach it, and its bindings end.
    lists.removeAll { $0.view === list.view }
    if currentName == list.view.name { currentName = lists[0].view.name }
    return "Dropped \(list.view.name).\n" + overview
  }

  private func clearAll() throws(CommandError) -> String {
    let done = lists.reduce(0) { $0 + $1.view.doneCount }
    guard done > 0 else { throw CommandError("no list has done items") }
    // One global action: every live store of TodoListState commits it.
    Store<TodoListState>.actions.clearCompleted()
    return "Cleared \(done) done \(done == 1 ? "item" : "items") from every list.\n" + overview
  }

  private var overview: String {
    Terminal.overview(lists.map(\.view), current: currentName)
  }

  private var currentList: List {
    list(named: currentName)!
  }

  private func list(named name: String) -> List? {
    lists.first { $0.view.name.lowercased() == name.lowercased() }
  }

  private func existing(_ name: String) throws(CommandError) -> List {
    guard let list = list(named: name) else {
      let names = lists.map(\.view.name).joined(separator: ", ")
      throw CommandError("no list named \"\(name)\"; the lists are: \(names)")
    }
    return list
  }

  private func item(_ number: Int) throws(CommandError) -> TodoItem {
    let items = currentList.store.computed.items.value
    guard number <= items.count else {
      let count = items.isEmpty ? "no items" : items.count == 1 ? "1 item" : "\(items.count) items"
      throw CommandError("\(currentName) has no item \(number); it has \(count)")
    }
    return items[number - 1]
  }
}
