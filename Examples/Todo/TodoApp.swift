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
///     FLUX_INSPECTOR=127.0.0.1:9400 swift run todo   # stream to the Flux Inspector, steerable
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
    usage: todo [--demo] [--log] [--quiet] [--record FILE] [--replay FILE] [--flight-recorder N] [--help]
      --demo           run a short built-in session, then exit
      --log            print every committed action, and the state it left, to standard error
      --quiet          after an item command, print only the line it changed
      --record FILE    write every action of the lists to FILE, as JSON Lines, as it
                       happens; a file already there is kept as FILE.1 (or .2, …)
      --replay FILE    play the actions of FILE (written by --record) back, then go on
      --flight-recorder N
                       keep the last N actions in memory, and write them (to the file of
                       --record, or flight-record.jsonl) when todo ends; a crash writes
                       one line saying how many were lost
      --help           show this text and the commands
    Without --demo, commands are read from standard input: typed at a prompt in a terminal,
    or run one per line, then exit, when input comes from a file or a pipe (then quiet).
    With FLUX_INSPECTOR=HOST:PORT (and FLUX_INSPECTOR_PAIRING=CODE when asked for), every
    action goes live to the Flux Inspector, which may steer the lists; what it does is printed.
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
    let echo = InspectorEcho()
    var inspectorOptions = InspectorConnection.Options()
    // As --record writes them: a live session exported from the Inspector becomes a test.
    inspectorOptions.fields = [.all, .swift]
    inspectorOptions.onCommand = { command in Task { @MainActor in echo.show(command) } }
    let inspector = InspectorConnection.fromEnvironment(appName: "todo", options: inspectorOptions)
    let board: Board
    do {
      board = try await Session.start(options, folder: folder, inspector: inspector)
    } catch {
      Terminal.error("todo: \(error.message)")
      exit(65)
    }

    let signalSources = board.log.map(Session.finishRecording(onSignal:))

    let isTerminal = isatty(STDIN_FILENO) != 0
    board.isQuiet = options.quiet || (!options.demo && !isTerminal)
    echo.board = board
    echo.prompts = isTerminal && !options.demo
    // With an inspector, standard input is read on a thread of its own: the main queue stays free
    // for the commits of its commands while the program waits for a line.
    // (Where `next(isolation:)` is missing, before macOS 15 and iOS 18, `readLine()` as before.)
    var input: AsyncStream<String>.Iterator?
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *), inspector != nil {
      input = InputLines.start().makeAsyncIterator()
    }
    func nextLine() async -> String? {
      if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *), input != nil {
        return await input?.next(isolation: #isolation)
      }
      return readLine()
    }
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
        guard let line = await nextLine() else {
          Terminal.write("")  // end of input: leave the shell's prompt on a line of its own
          return nil
        }
        return line
      }
    } else {
      failures = await run(on: board, echo: true) { await nextLine() }
    }
    withExtendedLifetime(signalSources) {}
    if let inspector {
      // The lines of the last actions are on their way: a second for the inspector to take them.
      inspector.send(waitingAtMost: 1)
      inspector.close()
    }
    if !Session.finish(board) { exit(74) }
    if failures > 0 { exit(1) }
  }

  /// Runs each line as a command until the lines end or one says quit, and returns how many
  /// failed. With `echo`, each command is written before its output, so a scripted session reads
  /// like a typed one. What is wrong with a command goes to standard error.
  @MainActor
  @discardableResult
  static func run(on board: Board, echo: Bool, nextLine: () async -> String?) async -> Int {
    var failures = 0
    while let line = await nextLine() {
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
        let output = try await board.run(command)
        // The log encodes and writes on its own queue: what the terminal shows is in the log
        // first, so a kill right after it leaves it there.
        board.log?.flush()
        if let output { Terminal.write(output) }
      } catch {
        board.log?.flush()
        failures += 1
        Terminal.error("Error: \(error.message)")
      }
    }
    return failures
  }
}

/// Says in the terminal what the Flux Inspector did: its command's outcome, and the list it
/// changed as it is now.
@MainActor
final class InspectorEcho {
  weak var board: Board?
  /// Whether a prompt waits for a line: it is written again after.
  var prompts = false

  func show(_ command: InspectorConnection.Command) {
    // The log of --record writes on its own queue: the line of the command's commit is in it
    // before the terminal shows the command, as for a command typed, so a kill right after
    // leaves it there.
    board?.log?.flush()
    guard command.succeeded else {
      Terminal.error("Inspector: \(command.name) was not done: \(command.outcome)")
      return
    }
    var text = "Inspector: \(command.outcome)"
    if let label = command.store, let list = board?.render(label: label) { text += "\n" + list }
    if prompts, let board { text = "\n" + text + "\n\(board.current)> " }
    Terminal.write(text, terminator: prompts ? "" : "\n")
  }
}

/// Standard input's lines, read on a thread of their own, with `read(2)`: not `readLine()`,
/// which holds standard input's lock while it waits, and `fflush(nil)`, which ``Terminal``
/// calls, would wait for it.
enum InputLines {
  static func start() -> AsyncStream<String> {
    var made: AsyncStream<String>.Continuation?
    let lines = AsyncStream<String> { made = $0 }
    guard let continuation = made else { preconditionFailure("AsyncStream gives its continuation at once") }
    let thread = Thread {
      var pending: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(STDIN_FILENO, &chunk, chunk.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        pending.append(contentsOf: chunk[0..<count])
        while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
          var line = pending[..<end]
          if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
          continuation.yield(String(decoding: line, as: UTF8.self))
          pending.removeFirst(end + 1)
        }
      }
      if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
      continuation.finish()
    }
    thread.start()
    return lines
  }
}
