import FluxCore
import FluxDevtools
import Foundation

/// The command line's options.
struct Options {
  var demo = false
  var log = false
  var help = false
  var record: String?
  var replay: String?

  /// Reads the options, or says what is wrong and exits.
  static func parse(_ arguments: ArraySlice<String>) -> Options {
    var options = Options()
    var arguments = arguments.makeIterator()
    while let argument = arguments.next() {
      switch argument {
      case "--demo": options.demo = true
      case "--log": options.log = true
      case "--help", "-h": options.help = true
      case "--record": options.record = file(after: argument, arguments.next())
      case "--replay": options.replay = file(after: argument, arguments.next())
      default:
        Terminal.error("todo: unknown option \(argument)\n\(TodoApp.usage)")
        exit(64)
      }
    }
    return options
  }

  private static func file(after option: String, _ next: String?) -> String {
    guard let next, !next.hasPrefix("--") else {
      Terminal.error("todo: \(option) needs a file, like: todo \(option) session.jsonl\n\(TodoApp.usage)")
      exit(64)
    }
    return next
  }
}

/// How a session begins: a board, perhaps recording, then a replay or the saved lists.
@MainActor
enum Session {
  /// Makes the board; with `--record`, its stores write to the log; then replays the
  /// recording of `--replay`, or (but for `--demo`) loads `folder/todo.md` when it exists.
  ///
  /// A recording is read and checked whole before anything is dispatched: a bad or cut-short
  /// file is an error, and nothing is replayed.
  static func start(_ options: Options, folder: URL) async throws(CommandError) -> Board {
    // Read first, so that `--record` and `--replay` of one file replays the old session.
    let recording = try options.replay.map { path throws(CommandError) in try read(path) }
    var log: ActionLog?
    if let path = options.record {
      do {
        log = ActionLog(output: try .file(URL(fileURLWithPath: path)), fields: .all)
      } catch {
        throw CommandError("cannot record to \(path): \(error.localizedDescription)")
      }
    }
    let board = Board(firstList: "Inbox", defaultFolder: folder, log: log)
    if let recording, let path = options.replay {
      let count = try await replay(recording, into: board, from: path)
      Terminal.write("Replayed \(count) \(count == 1 ? "action" : "actions") from \(path).")
    } else if !options.demo, FileManager.default.fileExists(atPath: folder.appendingPathComponent(TodoFile.name).path) {
      do {
        let lists = try TodoFile.read(folder: folder)
        board.load(lists)
        let count = lists.count
        Terminal.write("Loaded \(count) \(count == 1 ? "list" : "lists") from todo-lists/\(TodoFile.name).")
      } catch {
        Terminal.error("todo: \(error.message); starting with an empty Inbox")
      }
    }
    return board
  }

  private static func read(_ path: String) throws(CommandError) -> Recording {
    do {
      return try Recording(contentsOf: URL(fileURLWithPath: path))
    } catch {
      throw CommandError("cannot replay \(path): \(error)")
    }
  }

  /// Dispatches the recorded actions into `board`'s stores: the board's by its label, each
  /// list's by its name, found when its action comes (the board makes it on the way).
  static func replay(_ recording: Recording, into board: Board, from path: String) async throws(CommandError)
    -> Int
  {
    let replay = Replay(recording)
    replay.route(Board.boardLabel, to: board.board.actions)
    replay.route(
      TodoListState.self, labels: { $0.hasPrefix(Board.listLabelPrefix) },
      to: { label in board.list(named: String(label.dropFirst(Board.listLabelPrefix.count)))?.store.actions })
    do {
      return try await replay.run()
    } catch {
      throw CommandError("cannot replay \(path): \(error)")
    }
  }
}
