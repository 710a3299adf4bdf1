import FluxCore
import FluxDevtools
import FluxReactive
import Foundation

/// The app: a store for the set of lists, a store per list, a store for saving, and the
/// terminal views bound to them.
///
/// Threading: every store commits on `.mainThread`, and bindings deliver there too (tests give
/// `.immediate` instead). The program runs its command loop on the main actor (its `main` is `async`),
/// and on the main queue `.mainThread` work with nothing waiting runs inline: a command's
/// actions are committed, and its views updated, before the command returns. The save runs as
/// an async action; its steps are committed on the main queue while the command loop awaits it.
@MainActor
final class Board {
  /// One list: its store, and the view its bindings keep up to date.
  struct List {
    let id: Int
    let store: Store<TodoListState>
    let view: ListView
  }

  /// The label of the board's store in an action log; a list's is `list:` and its name.
  nonisolated static let boardLabel = "board"
  nonisolated static let listLabelPrefix = "list:"
  /// The list a board begins with.
  nonisolated static let firstList = "Inbox"

  private(set) var lists: [List] = []
  let board: Store<BoardState>
  private let saving: Store<SaveState>
  private let statusLine = StatusLine()
  private let defaultFolder: URL
  /// The log the stores write to, with `--record`.
  let log: ActionLog?
  private let executor: Executor

  /// Whether item commands print only the line they changed rather than the whole list: for
  /// input from a file or a pipe, where a long script would print its list again and again.
  var isQuiet = false

  /// The `todo.md` files this session loaded, saved, or could not read: `save` replaces no
  /// other file, and none that changed since, unless asked with `save --replace`.
  private var files = KnownFiles()

  /// What the lists held when they were last loaded or saved (at first, one empty list): `load`
  /// does not drop changes made since unless asked with `load --discard`.
  private var stored: Fingerprint

  /// Whether a load could not read a `todo.md` that is there.
  var hasUnreadableFiles: Bool { files.hasUnreadableFiles }

  /// Whether the lists changed since they were last loaded or saved.
  var hasUnsavedChanges: Bool { Fingerprint(TodoFile.text(snapshots)) != stored }

  /// Runs just before a save renames its file into place.
  var beforeRename: @Sendable () -> Void = {}

  /// The name of the list that item commands work on.
  var current: String { board.computed.lists.value.current }

  /// Creates a board with one empty list; with `log`, the board's and the lists' stores write
  /// every action to it. Its stores commit, and its bindings deliver, on `executor`.
  init(firstList: String, defaultFolder: URL, log: ActionLog? = nil, executor: Executor = .mainThread) {
    self.defaultFolder = defaultFolder
    self.log = log
    self.executor = executor
    stored = Fingerprint(TodoFile.text([ListSnapshot(name: ListName.clean(firstList), items: [])]))
    board = Store(
      state: .init(firstList: firstList), mutations: .init(), executor: executor,
      middlewares: log.map { [$0.middleware(label: Self.boardLabel, snapshots: .snapshot)] } ?? [])
    saving = Store(state: .init(), mutations: .init(), executor: executor)
    saving.computed.statusLine.bind(to: statusLine, \.message, on: executor)
    // The list stores follow the board's state: made when a list comes, freed when it goes.
    board.computed.lists.signal.bind(to: self, on: .immediate) { board, lists in board.follow(lists) }
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
      board.actions.create(name)
      return Terminal.render(currentList.view)
    case .use(let name):
      board.actions.use(try existing(name).view.name)
      return Terminal.render(currentList.view)
    case .drop(let name):
      return try drop(existing(name))
    case .add(let title):
      let count = currentList.view.items.count
      currentList.store.actions.add(title)
      // Cancelled by the list's middleware: the item is there, not done.
      guard currentList.view.items.count > count else {
        throw CommandError("\(current) has \"\(Title.clean(title))\" already, not done; nothing added")
      }
      return changed(row: currentList.view.items.count)
    case .done(let number):
      let item = try item(number)
      guard !item.isDone else { throw CommandError("item \(number) is done already") }
      currentList.store.actions.setDone(item.id, true)
      return changed(row: number)
    case .undo(let number):
      let item = try item(number)
      guard item.isDone else { throw CommandError("item \(number) is not done") }
      currentList.store.actions.setDone(item.id, false)
      return changed(row: number)
    case .edit(let number, let title):
      currentList.store.actions.rename(try item(number).id, to: title)
      return changed(row: number)
    case .remove(let number):
      currentList.store.actions.remove(try item(number).id)
      return changed(row: nil)
    case .clear:
      guard currentList.view.doneCount > 0 else { throw CommandError("no item of \(current) is done") }
      currentList.store.actions.clearCompleted()
      return changed(row: nil)
    case .clearAll:
      return try clearAll()
    case .save(let path, let replacing):
      try await save(to: path, replacing: replacing)
      return nil
    case .load(let path, let discarding):
      let folder = path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? defaultFolder
      let loaded = try read(folder: folder)
      guard discarding || !hasUnsavedChanges else {
        throw CommandError(
          "load would drop the changes to the lists that are not saved; "
            + "save them first, or type load --discard to drop them")
      }
      load(loaded)
      let count = loaded.lists.count
      return
        (["Loaded \(count) \(count == 1 ? "list" : "lists") from \(folder.appendingPathComponent(TodoFile.name).path)."]
        + loaded.notes + [overview]).joined(separator: "\n")
    }
  }

  /// Reads the `todo.md` of `folder`; a file that exists but could not be read is kept from
  /// being replaced by `save` unasked.
  func read(folder: URL) throws(CommandError) -> TodoFile.Loaded {
    do {
      return try TodoFile.read(folder: folder)
    } catch {
      if let identity = error.identity { files.remember(identity, couldNotBeRead: error.cause) }
      throw CommandError(error.message)
    }
  }

  /// Replaces every list with those `loaded` read, which `save` may then replace.
  func load(_ loaded: TodoFile.Loaded) {
    load(loaded.lists)
    files.remember(loaded.identity, holds: loaded.content)
    stored = Fingerprint(TodoFile.text(loaded.lists))
  }

  /// Writes every list to the `todo.md` of the folder at `path` (the default folder's when
  /// `nil`): over a file that is there only if this session loaded or saved what it holds, or
  /// when `replacing`. A link there keeps leading to the file, which gets the lists.
  private func save(to path: String?, replacing: Bool) async throws(CommandError) {
    let folder = path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? defaultFolder
    let file = folder.appendingPathComponent(TodoFile.name).path
    let target: String
    do {
      target = try TodoFiles.saveTarget(of: file)
    } catch {
      throw CommandError("could not save to \(error.path): \(error.cause)")
    }
    // The check and the rename as one step for every session: a session saving the same file
    // now saves first, and this one then finds a file it has not loaded. (The folder is made
    // first, so that two first saves into a new folder take its lock too.)
    let lock: FolderLock?
    do {
      try FileFolders.make(folder)
      lock = try FolderLock(folder: URL(fileURLWithPath: target).deletingLastPathComponent().path)
    } catch {
      throw CommandError("could not save to \(error.path): \(error.cause)")
    }
    defer { withExtendedLifetime(lock) {} }  // held until the save is over
    if !replacing, let reason = files.whyNotReplace(target) {
      throw CommandError(
        "save does not replace \(file): \(reason); type save --replace to replace it, or save to another folder")
    }
    let lists = snapshots
    try await saving.actions.save(
      lists, to: URL(fileURLWithPath: target), named: file, in: folder, beforeRename: beforeRename)
    let content = Fingerprint(TodoFile.text(lists))
    stored = content
    if let identity = FileIdentity(path: target) { files.remember(identity, holds: content) }
  }

  /// Every list as it is now.
  private var snapshots: [ListSnapshot] {
    lists.map { ListSnapshot(name: $0.view.name, items: $0.store.computed.items.value) }
  }

  /// What an item command prints: the whole list, or when quiet, the row it changed (`row`,
  /// from 1), or the list's header line when it removed rows.
  private func changed(row: Int?) -> String {
    let view = currentList.view
    guard isQuiet else { return Terminal.render(view) }
    guard let row, view.items.indices.contains(row - 1) else { return "\(view.name) — \(view.progress)" }
    return "  " + view.items[row - 1].row(number: row)
  }

  /// Replaces every list with `loaded`, through actions: the board's, then each list's.
  func load(_ loaded: [ListSnapshot]) {
    board.actions.replace(with: loaded.map(\.name))
    // Each list found by its name in one step, as `list(named:)` finds it: the first of that name.
    let byName = Dictionary(lists.map { (ListName.key($0.view.name), $0) }) { first, _ in first }
    for snapshot in loaded {
      byName[ListName.key(snapshot.name)]?.store.actions.dispatch(action: .restore(items: snapshot.items))
    }
  }

  /// The list named `name` (in any case), if there is one.
  func list(named name: String) -> List? {
    lists.first { ListName.same($0.view.name, name) }
  }

  // MARK: Lists

  /// Makes a store for each list that came, and frees the store of each list that went.
  ///
  /// By id, in one pass over each: a board of many lists is followed in time linear in their
  /// number. The stores that went are freed before those that came are made.
  private func follow(_ state: Lists) {
    let wanted = Set(state.entries.map(\.id))
    lists.removeAll { !wanted.contains($0.id) }
    let kept = Dictionary(lists.map { ($0.id, $0) }) { first, _ in first }
    lists = state.entries.map { kept[$0.id] ?? makeList($0) }
  }

  private func makeList(_ entry: ListEntry) -> List {
    let label = Self.listLabelPrefix + entry.name
    let store = Store<TodoListState>(
      state: .init(name: entry.name), mutations: .init(), executor: executor,
      middlewares: [AnyMiddleware(NoDuplicateItems())]
        + (log.map { [$0.middleware(label: label, snapshots: .snapshot)] } ?? []))
    let view = ListView()
    view.name = store.computed.name
    // A KeyPath binding: the computed signal keeps the view's items up to date, until the view
    // is freed.
    store.computed.itemChanges.bind(to: view, \.items, on: executor)
    return List(id: entry.id, store: store, view: view)
  }

  private func drop(_ list: List) throws(CommandError) -> String {
    guard lists.count > 1 else {
      throw CommandError("\(list.view.name) is the only list; create another one before dropping it")
    }
    // The board drops the list; its store is freed: global actions no longer reach it, and its
    // bindings end.
    board.actions.drop(list.view.name)
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
    Terminal.overview(lists.map(\.view), current: current)
  }

  private var currentList: List {
    list(named: current)!
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
      throw CommandError("\(current) has no item \(number); it has \(count)")
    }
    return items[number - 1]
  }
}
