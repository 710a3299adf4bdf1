import FluxCore
import FluxDevtools
import Foundation

/// The command line's options.
struct Options: Equatable {
  var demo = false
  var log = false
  var help = false
  var quiet = false
  var record: String?
  var replay: String?
  /// With `--flight-recorder N`: how many of the last actions to keep, and write at the end.
  var flightRecorder: Int?

  /// Reads the options, or says what is wrong and exits.
  static func parse(_ arguments: ArraySlice<String>) -> Options {
    do {
      return try parsing(arguments)
    } catch {
      Terminal.error("todo: \(error.message)\n\(TodoApp.usage)")
      exit(64)
    }
  }

  /// The options, or what is wrong with them: an unknown option, a file missing, or an option
  /// given twice (the first would be lost without a word).
  static func parsing(_ arguments: ArraySlice<String>) throws(CommandError) -> Options {
    var options = Options()
    var seen: Set<String> = []
    var arguments = arguments.makeIterator()
    while let argument = arguments.next() {
      let name = argument == "-h" ? "--help" : argument
      guard seen.insert(name).inserted else { throw CommandError("\(name) is given twice") }
      switch name {
      case "--demo": options.demo = true
      case "--log": options.log = true
      case "--help": options.help = true
      case "--quiet": options.quiet = true
      case "--record": options.record = try file(after: argument, arguments.next())
      case "--replay": options.replay = try file(after: argument, arguments.next())
      case "--flight-recorder": options.flightRecorder = try count(after: argument, arguments.next())
      default:
        let guess = Suggestion.didYouMean(
          argument, among: ["--demo", "--log", "--help", "--quiet", "--record", "--replay", "--flight-recorder"])
        throw CommandError("unknown option \(argument)" + (guess.map { "; \($0)" } ?? ""))
      }
    }
    return options
  }

  /// The number of actions after `--flight-recorder`: a whole number from 1 to 1,000,000.
  private static func count(after option: String, _ next: String?) throws(CommandError) -> Int {
    guard let next, let count = Int(next), (1...1_000_000).contains(count) else {
      throw CommandError("\(option) needs a number of actions from 1 to 1000000, like: todo \(option) 500")
    }
    return count
  }

  private static func file(after option: String, _ next: String?) throws(CommandError) -> String {
    guard let next, !next.hasPrefix("--") else {
      throw CommandError("\(option) needs a file, like: todo \(option) session.jsonl")
    }
    return next
  }
}

/// How a session begins: a board, perhaps recording, then a replay or the saved lists.
@MainActor
enum Session {
  /// Where `--flight-recorder` writes without `--record`.
  static let flightRecord = "flight-record.jsonl"

  /// Makes the board; with `--record`, its stores write to the log; then replays the
  /// recording of `--replay`, or (but for `--demo`) loads `folder/todo.md` when it exists.
  ///
  /// A recording is read and checked whole before anything is dispatched: a bad or cut-short
  /// file is an error, and nothing is replayed.
  ///
  /// `--record` appends each action to its file as it ends, so the file holds every action
  /// even when the session is killed; the file that was there before is kept beside it
  /// (`FILE.1`, or the first free number), and said so. A file given to both `--record` and
  /// `--replay` is read first, then kept as `FILE.1`; if the replay fails, the new file is
  /// removed and the old one put back. A second `todo` recording to the same file is refused.
  /// A write to the log that fails is reported at once.
  static func start(
    _ options: Options, folder: URL, inspector: InspectorConnection? = nil, executor: Executor = .mainThread
  ) async throws(CommandError) -> Board {
    // Read first, so that `--record` and `--replay` of one file replays the old session.
    let recording = try options.replay.map { path throws(CommandError) in try read(path) }
    var output: ActionLogOutput?
    if let path = options.record ?? options.flightRecorder.map({ _ in Session.flightRecord }) {
      do {
        output = try .file(URL(fileURLWithPath: path)) { failure in
          Terminal.error("todo: the recording stopped: \(failure)")
        }
      } catch {
        throw CommandError("cannot record to \(path): \(error.cause)")
      }
      if let previous = output?.previousFile {
        Terminal.write("Recording to \(path); the file that was there is kept as \(previous.lastPathComponent).")
      }
    }
    let board = Board(
      firstList: Board.firstList, defaultFolder: folder,
      log: output.map { output in
        options.flightRecorder.map { ActionLog(output: output, fields: [.all, .swift], flightRecorder: $0) }
          ?? ActionLog(output: output, fields: [.all, .swift])
      },
      inspector: inspector, executor: executor)
    if let recording, let path = options.replay {
      do {
        let count = try await replay(recording, into: board, from: path)
        Terminal.write("Replayed \(count) \(count == 1 ? "action" : "actions") from \(path).")
      } catch {
        board.log?.flush()
        output?.discard()
        throw error
      }
    } else if !options.demo {
      do {
        let loaded = try board.read(folder: folder)
        board.load(loaded)
        let count = loaded.lists.count
        Terminal.write("Loaded \(count) \(count == 1 ? "list" : "lists") from todo-lists/\(TodoFile.name).")
        for note in loaded.notes { Terminal.write(note) }
      } catch {
        // A file that does not exist is no error: save makes it.
        if board.hasUnreadableFiles {
          Terminal.error(
            "todo: \(error.message); starting with an empty Inbox (save does not replace the file unless you "
              + "type save --replace)")
        }
      }
    }
    return board
  }

  /// Ends the session: the log of `--record` is written to the disk and closed. Returns whether
  /// all went well; if not, says what went wrong.
  static func finish(_ board: Board) -> Bool {
    guard let log = board.log else { return true }
    do {
      try log.finish()
      return true
    } catch {
      Terminal.error("todo: the recording is incomplete: \(error)")
      return false
    }
  }

  /// The signals that end a session early: Ctrl-C, `kill`, and a terminal that closes.
  nonisolated static let endingSignals = [SIGINT, SIGTERM, SIGHUP]

  /// When a signal of ``endingSignals`` ends a session that records to `log`: writes the lines
  /// still on their way (each line already written is in the file: the log appends it there as
  /// its action ends), closes the file, says so if that failed, then lets the signal end the
  /// program as it would have. Returns what catches the signals, to keep while the session runs.
  ///
  /// Called on the main thread, which it makes block those signals, as the threads of the
  /// global queues do: a signal then waits for its handler, which runs on a global queue (the
  /// main thread may be waiting for input), even one that comes before the handler is in place.
  /// Ignoring the signals instead would drop one that came in that moment.
  nonisolated static func finishRecording(onSignal log: ActionLog) -> [any DispatchSourceSignal] {
    var blocked = sigset_t()
    sigemptyset(&blocked)
    for number in endingSignals { sigaddset(&blocked, number) }
    pthread_sigmask(SIG_BLOCK, &blocked, nil)
    var sources: [any DispatchSourceSignal] = []
    for number in endingSignals {
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler {
        log.flush()
        do {
          try log.finish()
        } catch {
          // Not through `Terminal.error`, whose `fflush(nil)` waits for standard input's lock,
          // which the main thread holds while it waits for a line.
          let message = Terminal.visible("todo: the recording is incomplete: \(error)") + "\n"
          FileHandle.standardError.write(Data(message.utf8))
        }
        // The default action, on this thread, which lets the signal through.
        signal(number, SIG_DFL)
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, number)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        raise(number)
      }
      source.resume()
      sources.append(source)
    }
    return sources
  }

  private static func read(_ path: String) throws(CommandError) -> Recording {
    do {
      return try Recording(contentsOf: URL(fileURLWithPath: path))
    } catch {
      // An error of the whole file names the path already.
      throw CommandError(error.line == nil ? error.message : "cannot replay \(path): \(error)")
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
