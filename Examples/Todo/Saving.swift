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

/// Where a save stands.
enum SaveStatus: Equatable, Sendable {
  case idle
  case saving(file: String, written: [String], total: Int)
  case saved(file: String, lists: Int)
  case failed(String)
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

  fileprivate let status = Variable(SaveStatus.idle)

  /// What `--log` prints after each commit.
  var description: String {
    switch status.value {
    case .idle: "Saving(idle)"
    case .saving(_, let written, let total): "Saving(\(written.count) of \(total) written)"
    case .saved(let file, _): "Saving(saved \(file))"
    case .failed: "Saving(failed)"
    }
  }
}

struct SaveMutations: Mutations {
  func commit(action: SaveAction, state: SaveState) {
    state.status.modify { status in
      switch (action, status) {
      case (.begin(let file, let total), _):
        status = .saving(file: file, written: [], total: total)
      case (.wrote(let list), .saving(let file, let written, let total)):
        status = .saving(file: file, written: written + [list], total: total)
      case (.finish, .saving(let file, let written, _)):
        status = .saved(file: file, lists: written.count)
      case (.fail(let message), _):
        status = .failed(message)
      case (.wrote, _), (.finish, _):
        break  // not saving: nothing to report
      }
    }
  }
}

extension Actions where State == SaveState {
  /// Writes `lists` to `todo.md` in `folder`, one list at a time, reporting each step.
  ///
  /// An async action: it runs as part of a task, does its slow work between dispatches, and
  /// dispatches each step as it happens. The store commits every step on its executor, and the
  /// status line bound to `statusLine` shows it.
  ///
  /// The file is written aside and renamed into place once whole and on the disk: a failure or
  /// a crash leaves the old `todo.md` or the new one, never neither. A folder named `todo.md`
  /// is an error, never removed. Returns whether the file was saved.
  @discardableResult
  func save(_ lists: [ListSnapshot], to folder: URL, beforeRename: @Sendable () -> Void = {}) async -> Bool {
    let file = folder.appendingPathComponent(TodoFile.name)
    dispatch(action: .begin(file: file.path, total: lists.count))
    do throws(FileFailure) {
      try FileFolders.make(folder)
      let aside = try AsideFile(replacing: file)
      try aside.write((TodoFile.header + "\n\n").utf8)
      for list in lists {
        try aside.write(list.markdown.utf8)
        dispatch(action: .wrote(list: list.name))
      }
      try aside.write((TodoFile.trailer(lists: lists.count) + "\n").utf8)
      try aside.commit(beforeRename: beforeRename)
      dispatch(action: .finish)
      return true
    } catch {
      dispatch(action: .fail("could not save to \(error.path): \(error.cause)"))
      return false
    }
  }
}

extension Computed where State == SaveState {
  /// One line per step of a save; `nil` when there is nothing to report.
  var statusLine: Signal<String?> {
    state.status.signal.map { status in
      switch status {
      case .idle:
        return nil
      case .saving(let file, let written, let total) where written.isEmpty:
        return "Saving \(total) \(total == 1 ? "list" : "lists") to \(file)"
      case .saving(_, let written, let total):
        return "  [\(written.count)/\(total)] \(written.last ?? "")"
      case .saved(let file, let lists):
        return "Saved \(lists) \(lists == 1 ? "list" : "lists") to \(file)"
      case .failed(let message):
        return "Error: \(message)"
      }
    }
  }
}
