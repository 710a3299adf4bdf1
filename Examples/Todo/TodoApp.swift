import FluxCore
import FluxDevtools
import Foundation

/// `todo`: todo lists in the terminal, one store per list.
///
///     swift run todo             # type commands; `help` lists them
///     swift run todo --demo      # watch a short session
///     swift run todo --log       # also print every committed action to standard error
///     swift run todo --record session.jsonl   # write every action to a log
///     swift run todo --replay session.jsonl   # play a log back, then go on
///     echo "add Milk" | swift run todo
///
/// Files: `save` writes aside and renames into place (a failure or a crash leaves the old file
/// or the new one, never neither; a link to `todo.md` keeps leading to it); `--record` appends
/// each action to its file as it ends (a crash, Ctrl-C or `kill` leaves every action before it
/// there) and keeps the file that was there beside it; a failed write is reported; `save`
/// replaces a `todo.md` only if the session loaded or saved what it holds, unless the user types
/// `save --replace`, and `load` drops unsaved changes only when asked with `load --discard`;
/// nothing is deleted. Messages name the path and the cause in words, on standard error.
@main
struct TodoApp {
  static let usage = """
    usage: todo [--demo] [--log] [--quiet] [--record FILE] [--replay FILE] [--help]
      --demo           run a short built-in session, then exit
      --log            print every committed action, and the state it left, to standard error
      --quiet          after an item command, print only the line it changed
      --record FILE    write every action of the lists to FILE, as JSON Lines, as it
                       happens; a file already there is kept as FILE.1 (or .2, …)
      --replay FILE    play the actions of FILE (written by --record) back, then go on
      --help           show this text and the commands
    Without --demo, commands are read from standard input: typed at a prompt in a terminal,
    or run one per line, then exit, when input comes from a file or a pipe (then quiet).
    At start, the lists that save wrote to ./todo-lists/todo.md are loaded, if it exists
    (not with --demo, nor with --replay: the recording holds what the recorded session loaded).
    save replaces a todo.md only if this session loaded or saved what it holds (not one it
    could not read, never read, or that changed since) unless you type save --replace.
    What is wrong with a command goes to standard error; with input from a file or a pipe,
    the exit status is 1 when a command failed, 0 when all ran.
    """

  static func main() async {
    // A write past the process's file-size limit is an error to report, not a signal that ends
    // the program.
    signal(SIGXFSZ, SIG_IGN)
    let options = Options.parse(CommandLine.arguments.dropFirst())
    if options.help {
      Terminal.write(usage + "\n\nCommands\n" + Terminal.help)
      return
    }
    if options.log {
      // Shared middleware sees every store: the board's, the lists' and the saving store's.
      SharedMiddlewares.add(LoggingMiddleware())
    }

    let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
      .appendingPathComponent("todo-lists", isDirectory: true)
    let board: Board
    do {
      board = try await Session.start(options, folder: folder)
    } catch {
      Terminal.error("todo: \(error.message)")
      exit(65)
    }

    let signalSources = board.log.map(Session.finishRecording(onSignal:))

    let isTerminal = isatty(STDIN_FILENO) != 0
    board.isQuiet = options.quiet || (!options.demo && !isTerminal)
    if ProcessInfo.processInfo.environment["TODO_KILL_BEFORE_RENAME"] != nil {
      // For the fault tests: the process is killed with the new file written, before its rename.
      board.beforeRename = { kill(getpid(), SIGKILL) }
    }

    var failures = 0
    if options.demo {
      var script = Demo.script.makeIterator()
      await run(on: board, echo: true) { script.next() }
    } else if isTerminal {
      Terminal.write("todo: lists in your terminal. Type help for the commands, quit to leave.")
      await run(on: board, echo: false) {
        Terminal.write("\(board.current)> ", terminator: "")
        guard let line = readLine() else {
          Terminal.write("")  // end of input: leave the shell's prompt on a line of its own
          return nil
        }
        return line
      }
    } else {
      failures = await run(on: board, echo: true) { readLine() }
    }
    withExtendedLifetime(signalSources) {}
    if !Session.finish(board) { exit(74) }
    if failures > 0 { exit(1) }
  }

  /// Runs each line as a command until the lines end or one says quit, and returns how many
  /// failed. With `echo`, each command is written before its output, so a scripted session reads
  /// like a typed one. What is wrong with a command goes to standard error.
  @MainActor
  @discardableResult
  static func run(on board: Board, echo: Bool, nextLine: () -> String?) async -> Int {
    var failures = 0
    while let line = nextLine() {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.isEmpty { continue }
      if trimmed.hasPrefix("#") {
        if echo { Terminal.write(trimmed) }
        continue
      }
      if echo { Terminal.write("\(board.current)> \(trimmed)") }
      do {
        let command = try Command(parsing: trimmed)
        if command == .quit { break }
        if let output = try await board.run(command) { Terminal.write(output) }
      } catch {
        failures += 1
        Terminal.error("Error: \(error.message)")
      }
    }
    return failures
  }
}
