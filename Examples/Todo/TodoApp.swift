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
@main
struct TodoApp {
  static let usage = """
    usage: todo [--demo] [--log] [--record FILE] [--replay FILE] [--help]
      --demo           run a short built-in session, then exit
      --log            print every committed action, and the state it left, to standard error
      --record FILE    write every action of the lists to FILE, as JSON Lines
      --replay FILE    play the actions of FILE (written by --record) back, then go on
      --help           show this text and the commands
    Without --demo, commands are read from standard input: typed at a prompt in a terminal,
    or run one per line, then exit, when input comes from a file or a pipe.
    At start, the lists that save wrote to ./todo-lists/todo.md are loaded, if it exists
    (not with --demo, nor with --replay: the recording holds what the recorded session loaded).
    """

  static func main() async {
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

    if options.demo {
      var script = Demo.script.makeIterator()
      await run(on: board, echo: true) { script.next() }
    } else if isatty(STDIN_FILENO) != 0 {
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
      await run(on: board, echo: true) { readLine() }
    }
  }

  /// Runs each line as a command until the lines end or one says quit. With `echo`, each
  /// command is written before its output, so a scripted session reads like a typed one.
  @MainActor
  static func run(on board: Board, echo: Bool, nextLine: () -> String?) async {
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
        if command == .quit { return }
        if let output = try await board.run(command) { Terminal.write(output) }
      } catch {
        Terminal.write("Error: \(error.message)")
      }
    }
  }
}
