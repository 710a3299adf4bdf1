import Foundation

/// What the terminal shows of one list. Bindings keep it up to date; nothing else writes it.
///
/// The rows, the progress and the count of done items are made from the items when they are
/// shown, not on every change: a script that adds thousands of items would otherwise go
/// through every item again for each.
final class ListView {
  var name = ""
  var items: [TodoItem] = []

  /// "2 of 5 done", or "empty".
  var progress: String { summary(of: items) }

  /// How many items are done.
  var doneCount: Int { items.count(where: \.isDone) }

  /// One line per item, numbered from 1.
  var rows: [String] {
    items.enumerated().map { index, item in item.row(number: index + 1) }
  }
}

/// The line that reports a save in progress: each new message is printed as it arrives.
final class StatusLine {
  var message: String? {
    didSet {
      if let message { Terminal.write(message) }
    }
  }
}

/// Writing to the terminal, and the text of the screens.
enum Terminal {
  /// Writes `text` and a line break to standard output, at once, so that it keeps its place
  /// among the lines that `--log` writes to standard error. Control characters are shown,
  /// not sent (see ``visible(_:)``).
  static func write(_ text: String, terminator: String = "\n") {
    print(visible(text), terminator: terminator)
    fflush(nil)
  }

  /// Writes `text` and a line break to standard error, its control characters shown.
  static func error(_ text: String) {
    fflush(nil)
    FileHandle.standardError.write(Data((visible(text) + "\n").utf8))
  }

  /// `text` with each control character but the line break written as an escape (`\u{1B}`),
  /// so that a title or a command cannot move the cursor, clear the screen or change colours.
  static func visible(_ text: String) -> String {
    var shown = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      if scalar != "\n", scalar.properties.generalCategory == .control {
        shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
      } else {
        shown.append(scalar)
      }
    }
    return String(shown)
  }

  /// One list: its name and progress, then its items.
  static func render(_ view: ListView) -> String {
    let header = "\(view.name) — \(view.progress)"
    return ([header] + view.rows.map { "  " + $0 }).joined(separator: "\n")
  }

  /// Every list on one line each; the current one marked with `*`.
  static func overview(_ views: [ListView], current: String) -> String {
    let width = views.map(\.name.count).max() ?? 0
    return views.map { view in
      let marker = view.name == current ? "*" : " "
      let padding = String(repeating: " ", count: width - view.name.count)
      return "\(marker) \(view.name)\(padding)  \(view.progress)"
    }.joined(separator: "\n")
  }

  static let help = """
    Lists
      lists                 show every list and its progress (* marks the current list)
      new <name>            create a list and switch to it
      use <name>            switch to a list
      drop <name>           delete a list
    Items of the current list
      show                  show the current list
      add <title>           add an item
      done <n>              mark item n done
      undo <n>              mark item n not done
      edit <n> <title>      change the title of item n
      remove <n>            delete item n
      clear                 delete the done items of the current list
      clear all             delete the done items of every list (one global action)
    Saving
      save [folder]         write every list to <folder>/todo.md (default: ./todo-lists), over a
                            todo.md only if this session loaded or saved what it holds
      save --replace [f]    save, even over a todo.md this session did not load or could not read
      load [folder]         replace every list with those of <folder>/todo.md (default: ./todo-lists),
                            if every change to the lists is saved
      load --discard [f]    load, dropping the changes that are not saved
    Other
      help                  show this screen
      quit                  leave (end of input works too)
    Lines starting with # are comments.
    """
}
