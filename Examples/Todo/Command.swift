/// One command typed at the prompt.
enum Command: Equatable {
  case help
  case lists
  case show
  case new(String)
  case use(String)
  case drop(String)
  case add(String)
  case done(Int)
  case undo(Int)
  case edit(Int, String)
  case remove(Int)
  case clear
  case clearAll
  /// Writes every list to the folder's `todo.md` (the default folder's when `nil`); with
  /// `replacing`, even over a file that could not be read.
  case save(String?, replacing: Bool = false)
  /// Replaces every list with those of the folder's `todo.md` (the default folder's when
  /// `nil`); with `discarding`, even when the lists have changes that are not saved.
  case load(String?, discarding: Bool = false)
  case quit
}

/// A command that cannot run, and why, in words for the user.
struct CommandError: Error {
  let message: String

  init(_ message: String) {
    self.message = message
  }
}

extension Command {
  /// Parses one line, such as `add Buy milk` or `done 2`.
  ///
  /// One rule for what follows the command's word: a command that takes a name, a title or a
  /// folder takes the rest of the line; one that takes a number takes one number; one that
  /// takes nothing takes nothing. Anything more is an error, and nothing runs. A name or title
  /// with a control character (a tab, an escape) is refused. A word that is no command, or a
  /// flag that is not the command's, is an error that names the one it most likely meant.
  init(parsing line: String) throws(CommandError) {
    let (word, rest) = Self.split(line)
    let command = word.lowercased()
    switch command {
    case "help", "?", "lists", "ls", "show", "quit", "exit":
      guard rest.isEmpty else { throw CommandError("\(command) takes nothing, not \"\(rest)\"") }
    default:
      break
    }
    switch command {
    case "help", "?":
      self = .help
    case "lists", "ls":
      self = .lists
    case "show":
      self = .show
    case "new":
      self = .new(try Self.required(rest, "new needs a name, like: new Groceries"))
    case "use":
      self = .use(try Self.required(rest, "use needs the name of a list, like: use Groceries"))
    case "drop":
      self = .drop(try Self.required(rest, "drop needs the name of a list, like: drop Groceries"))
    case "add":
      self = .add(try Self.required(rest, "add needs a title, like: add Buy milk"))
    case "done":
      self = .done(try Self.number(rest, usage: "done 2"))
    case "undo":
      self = .undo(try Self.number(rest, usage: "undo 2"))
    case "edit":
      let (number, title) = Self.split(rest)
      self = .edit(
        try Self.number(number, usage: "edit 2 Buy oat milk"),
        try Self.required(title, "edit needs a number and a new title, like: edit 2 Buy oat milk"))
    case "remove", "rm":
      self = .remove(try Self.number(rest, usage: "remove 2"))
    case "clear":
      switch rest.lowercased() {
      case "": self = .clear
      case "all": self = .clearAll
      default: throw CommandError("clear takes nothing or \"all\", not \"\(rest)\"")
      }
    case "save":
      let (folder, replacing) = try Self.folder(rest, command: command, flag: "--replace")
      self = .save(folder, replacing: replacing)
    case "load":
      let (folder, discarding) = try Self.folder(rest, command: command, flag: "--discard")
      self = .load(folder, discarding: discarding)
    case "quit", "exit":
      self = .quit
    default:
      let guess = Suggestion.didYouMean(command, among: Self.words, quoted: true).map { " (\($0))" } ?? ""
      throw CommandError("unknown command \"\(word)\"\(guess); type help to see the commands")
    }
  }

  /// Every word that starts a command, aliases included.
  static let words = [
    "help", "lists", "ls", "show", "new", "use", "drop", "add", "done", "undo", "edit", "remove", "rm", "clear",
    "save", "load", "quit", "exit",
  ]

  /// The folder of `save` or `load`, and whether `flag` came before it. A first word that
  /// starts with `--` and is not `flag` is a mistyped flag, not a folder (`./--name` is a
  /// folder of that name).
  private static func folder(_ rest: String, command: String, flag: String) throws(CommandError) -> (
    folder: String?, flagged: Bool
  ) {
    let (first, folder) = split(rest)
    if first == flag { return (folder.isEmpty ? nil : folder, true) }
    if first.hasPrefix("--") {
      let guess = Suggestion.didYouMean(first, among: [flag]) ?? "its flag is \(flag)"
      throw CommandError(
        "\(command) has no flag \(first); \(guess) (a folder whose name starts with -- is written ./\(first))")
    }
    return (rest.isEmpty ? nil : rest, false)
  }

  /// The first word of `line` and the rest, both trimmed.
  private static func split(_ line: Substring) -> (word: String, rest: Substring) {
    let trimmed = line.drop(while: \.isWhitespace)
    let word = trimmed.prefix { !$0.isWhitespace }
    var rest = trimmed.dropFirst(word.count).drop(while: \.isWhitespace)
    while rest.last?.isWhitespace == true { rest = rest.dropLast() }
    return (String(word), rest)
  }

  private static func split(_ line: String) -> (word: String, rest: String) {
    let (word, rest) = split(line[...])
    return (word, String(rest))
  }

  private static func required(_ text: String, _ message: String) throws(CommandError) -> String {
    guard !text.isEmpty else { throw CommandError(message) }
    guard !Title.hasControlCharacter(text) else {
      throw CommandError("a name or title cannot hold a control character (a tab, an escape, a line break)")
    }
    return text
  }

  private static func number(_ text: String, usage: String) throws(CommandError) -> Int {
    guard !text.isEmpty else { throw CommandError("which item? Give its number, like: \(usage)") }
    let (_, more) = split(text)
    guard more.isEmpty else {
      throw CommandError("one item number, not \"\(text)\"; like: \(usage)")
    }
    guard let number = Int(text), number > 0 else {
      throw CommandError("\"\(text)\" is not an item number; items are numbered from 1, like: \(usage)")
    }
    return number
  }
}
