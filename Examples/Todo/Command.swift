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
  case save(String?)
  case load(String?)
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
  init(parsing line: String) throws(CommandError) {
    let (word, rest) = Self.split(line)
    switch word.lowercased() {
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
      self = .save(rest.isEmpty ? nil : rest)
    case "load":
      self = .load(rest.isEmpty ? nil : rest)
    case "quit", "exit":
      self = .quit
    default:
      throw CommandError("unknown command \"\(word)\"; type help to see the commands")
    }
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
    return text
  }

  private static func number(_ text: String, usage: String) throws(CommandError) -> Int {
    guard !text.isEmpty else { throw CommandError("which item? Give its number, like: \(usage)") }
    guard let number = Int(text), number > 0 else {
      throw CommandError("\"\(text)\" is not an item number; items are numbered from 1, like: \(usage)")
    }
    return number
  }
}
