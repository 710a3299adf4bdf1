import FluxCore
import FluxDevtools
import FluxReactive
import Foundation

/// A list as it is written to disk.
struct ListSnapshot: Equatable, Sendable {
  let name: String
  var items: [TodoItem]

  var markdown: String {
    let lines = items.map { "- [\($0.isDone ? "x" : " ")] \($0.title)" }
    return (["## \(name)", ""] + lines + [""]).joined(separator: "\n") + "\n"
  }
}

/// Where a save stands: what the status line shows.
struct SaveStatus: Equatable, Sendable {
  enum Phase: Equatable, Sendable {
    case idle
    case saving
    case saved
    case failed(String)
  }

  var phase = Phase.idle
  /// The file being saved, as the user named it.
  var file = ""
  /// The lists written so far, in order: each step appends one, in place.
  var written: [String] = []
  /// How many lists the save writes.
  var total = 0

  /// Takes `action`'s step. A step that comes when no save is under way changes nothing.
  mutating func apply(_ action: SaveAction) {
    switch action {
    case .begin(let file, let total):
      phase = .saving
      self.file = file
      written.removeAll(keepingCapacity: true)
      self.total = total
    case .wrote(let list):
      guard phase == .saving else { return }
      written.append(list)
    case .finish:
      guard phase == .saving else { return }
      phase = .saved
    case .fail(let message):
      phase = .failed(message)
    }
  }
}

enum SaveAction: Sendable {
  case begin(file: String, total: Int)
  case wrote(list: String)
  case finish
  case fail(String)
}

/// The state of saving: one store, shared by every list.
final class SaveState: State, CustomStringConvertible {
  typealias Action = SaveAction
  typealias Mutations = SaveMutations

  fileprivate let status = Variable(SaveStatus())

  /// What `--log` prints after each commit.
  var description: String {
    let status = status.value
    switch status.phase {
    case .idle: return "Saving(idle)"
    case .saving: return "Saving(\(status.written.count) of \(status.total) written)"
    case .saved: return "Saving(saved \(status.file))"
    case .failed: return "Saving(failed)"
    }
  }
}

struct SaveMutations: Mutations {
  func commit(action: SaveAction, state: SaveState) {
    // In place: a step appends to the lists written, never copies them.
    state.status.modify { $0.apply(action) }
  }
}

extension Actions where State == SaveState {
  /// Writes `lists` to `file` (the `todo.md` of `folder`, or the file its links lead to), one
  /// list at a time, reporting each step; `name` is the file as the user named it.
  ///
  /// An async action: it runs as part of a task, does its slow work between dispatches, and
  /// dispatches each step as it happens. The store commits every step on its executor, and the
  /// status line bound to `statusLine` shows it.
  ///
  /// The file is written aside and renamed into place once whole and on the disk: a failure or
  /// a crash leaves the old `todo.md` or the new one, never neither. A folder named `todo.md`
  /// is an error, never removed. Throws what went wrong, with the path and the cause in words.
  func save(
    _ lists: [ListSnapshot], to file: URL, named name: String, in folder: URL, beforeRename: @Sendable () -> Void = {}
  ) async throws(CommandError) {
    dispatch(action: .begin(file: name, total: lists.count))
    do throws(FileFailure) {
      try FileFolders.make(folder)
      let aside = try AsideFile(replacing: file)
      try aside.write(TodoFile.opening.utf8)
      for list in lists {
        try aside.write(list.markdown.utf8)
        dispatch(action: .wrote(list: list.name))
      }
      try aside.write(TodoFile.closing(lists: lists.count).utf8)
      try aside.commit(beforeRename: beforeRename)
      dispatch(action: .finish)
    } catch {
      let message = "could not save to \(error.path): \(error.cause)"
      dispatch(action: .fail(message))
      throw CommandError(message)
    }
  }
}

extension Computed where State == SaveState {
  /// One line per step of a save; `nil` when there is nothing to report. A failure is not
  /// shown here: the `save` command reports it as its error.
  var statusLine: Signal<String?> {
    state.status.signal.map { status in
      switch status.phase {
      case .idle, .failed:
        return nil
      case .saving where status.written.isEmpty:
        return "Saving \(status.total) \(status.total == 1 ? "list" : "lists") to \(status.file)"
      case .saving:
        return "  [\(status.written.count)/\(status.total)] \(status.written.last ?? "")"
      case .saved:
        let lists = status.written.count
        return "Saved \(lists) \(lists == 1 ? "list" : "lists") to \(status.file)"
      }
    }
  }
}
