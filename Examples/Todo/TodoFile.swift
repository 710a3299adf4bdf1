import FluxDevtools
import Foundation

/// The file `save` writes and `load` reads: Markdown, one section per list, and a last line
/// that says the file is complete.
///
///     # Todo
///
///     ## Inbox
///
///     - [ ] Milk
///     - [x] Eggs
///
///     <!-- end of todo: 1 list -->
enum TodoFile {
  static let name = "todo.md"
  static let header = "# Todo"

  /// The last line: a file without it was cut short.
  static func trailer(lists: Int) -> String {
    "<!-- end of todo: \(lists) \(lists == 1 ? "list" : "lists") -->"
  }

  /// The text of a file that holds `lists`: what `save` writes.
  static func text(_ lists: [ListSnapshot]) -> String {
    opening + lists.map(\.markdown).joined() + closing(lists: lists.count)
  }

  /// What comes before the lists, and after them.
  static let opening = header + "\n\n"
  static func closing(lists: Int) -> String {
    trailer(lists: lists) + "\n"
  }

  /// What a load read: the lists, what it changed to read them, and the file they came from.
  struct Loaded {
    let lists: [ListSnapshot]
    /// One line per name or title whose control characters became spaces, with its line.
    let notes: [String]
    let identity: FileIdentity
    /// The bytes the lists were read from.
    let content: Fingerprint
  }

  /// Why a file could not be read: it does not exist (and so holds nothing to lose), or it
  /// exists and was not read, which `save` then does not replace unasked.
  struct ReadError: Error {
    /// What went wrong, with the path.
    let message: String
    /// What went wrong with the file, without its path.
    let cause: String
    /// The file that could not be read; `nil` when there is none (or it cannot be looked at).
    let identity: FileIdentity?
  }

  /// Reads `folder/todo.md`, or throws what is wrong with it: the path and the cause in words.
  ///
  /// The file may start with a UTF-8 byte order mark, and its lines may end in `\n` or `\r\n`.
  static func read(folder: URL) throws(ReadError) -> Loaded {
    let file = folder.appendingPathComponent(name)
    let read: (identity: FileIdentity, bytes: [UInt8])
    do {
      read = try TodoFiles.read(file.path)
    } catch {
      if error.cause == FileCause.words(errno: ENOENT) {
        throw ReadError(message: "there is no \(file.path); save writes it", cause: error.cause, identity: nil)
      }
      throw ReadError(
        message: "cannot read \(file.path): \(error.cause)", cause: error.cause, identity: FileIdentity(path: file.path)
      )
    }
    do {
      let (lists, notes) = try contents(bytes: read.bytes)
      return Loaded(lists: lists, notes: notes, identity: read.identity, content: Fingerprint(read.bytes))
    } catch {
      throw ReadError(
        message: "cannot load \(file.path): \(error.message)", cause: error.message, identity: read.identity)
    }
  }

  /// The lists in `bytes`, UTF-8 text with or without a byte order mark, or what is wrong.
  static func parse(bytes: [UInt8]) throws(CommandError) -> [ListSnapshot] {
    try contents(bytes: bytes).lists
  }

  /// The lists in `bytes`, and what reading them changed (see ``contents(of:)``).
  static func contents(bytes: [UInt8]) throws(CommandError) -> (lists: [ListSnapshot], notes: [String]) {
    let text = bytes.starts(with: byteOrderMark) ? bytes.dropFirst(byteOrderMark.count) : bytes[...]
    if let offset = FileBytes.firstNonUTF8Offset(text) {
      throw CommandError("the file is not UTF-8 at byte \(offset + 1 + bytes.count - text.count)")
    }
    return try contents(of: String(decoding: text, as: UTF8.self))
  }

  private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

  /// The lines of `text`, split on `\n` and `\r\n` alike: on the scalars, since `"\r\n"` is one
  /// `Character`.
  static func lines(_ text: String) -> [String] {
    text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      String(String.UnicodeScalarView(line.last == "\r" ? line.dropLast() : line))
    }
  }

  /// The lists in `text`, each item numbered from 1, or what is wrong, with its line.
  static func parse(_ text: String) throws(CommandError) -> [ListSnapshot] {
    try contents(of: text).lists
  }

  /// The lists in `text`, each item numbered from 1, and a note for each line whose name or
  /// title held a control character; or what is wrong, with its line.
  ///
  /// The header comes first: a file that is not a todo file says so, and only a todo file
  /// without its end line is cut short. Names and titles are read as the board holds them (a
  /// control character, which a list cannot hold, becomes a space, and the note says so), so
  /// that loading keeps every list and item: two names that become one, or a name of control
  /// characters only, is an error, never a list left out.
  static func contents(of text: String) throws(CommandError) -> (lists: [ListSnapshot], notes: [String]) {
    let lines = lines(text)
    let isBlank: (String) -> Bool = { $0.allSatisfy(\.isWhitespace) }
    guard let first = lines.firstIndex(where: { !isBlank($0) }) else { throw CommandError("the file is empty") }
    guard lines[first] == header else {
      throw CommandError("line \(first + 1): a todo file starts with \"\(header)\"")
    }
    guard let last = lines.last(where: { !isBlank($0) }), last.hasPrefix("<!-- end of todo:") else {
      throw CommandError("the file is cut short: its end line is missing")
    }
    var lists: [ListSnapshot] = []
    // The names so far, by ``ListName/key(_:)``: a file of many lists is read in one pass.
    var names: Set<String> = []
    var notes: [String] = []
    var trailer: (line: Int, text: String)?
    for (index, line) in lines.enumerated().dropFirst(first + 1) {
      let number = index + 1
      if isBlank(line) { continue }
      if trailer != nil { throw CommandError("line \(number): there is text after the end line") }
      if line.hasPrefix("## ") {
        let written = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
        guard !written.isEmpty else { throw CommandError("line \(number): a list has no name") }
        let name = ListName.clean(written)
        guard !name.isEmpty else { throw CommandError("line \(number): the list's name holds only control characters") }
        if name != written {
          notes.append(
            "line \(number): the list's name \"\(written)\" holds a control character; it is read as \"\(name)\"")
        }
        guard names.insert(ListName.key(name)).inserted else {
          throw CommandError("line \(number): there are two lists named \"\(name)\"")
        }
        lists.append(ListSnapshot(name: name, items: []))
      } else if let (written, isDone) = item(line) {
        guard !lists.isEmpty else { throw CommandError("line \(number): an item comes before any list") }
        let title = Title.clean(written)
        guard !title.isEmpty else {
          throw CommandError("line \(number): the item's title holds only control characters")
        }
        if title != written {
          notes.append("line \(number): the title \"\(written)\" holds a control character; it is read as \"\(title)\"")
        }
        lists[lists.count - 1].items.append(
          TodoItem(id: lists[lists.count - 1].items.count + 1, title: title, isDone: isDone))
      } else if line.hasPrefix("<!-- end of todo:") {
        trailer = (number, line)
      } else {
        throw CommandError("line \(number): not a list, an item or the end line: \(line)")
      }
    }
    if let trailer, trailer.text != Self.trailer(lists: lists.count) {
      let counted = lists.count == 1 ? "1 list" : "\(lists.count) lists"
      throw CommandError("line \(trailer.line): the end line says \"\(trailer.text)\", but the file has \(counted)")
    }
    guard !lists.isEmpty else { throw CommandError("the file has no lists") }
    return (lists, notes)
  }

  /// The title of `- [ ] title` or `- [x] title`, and whether the item is done.
  private static func item(_ line: String) -> (title: String, isDone: Bool)? {
    for (marker, isDone) in [("- [ ] ", false), ("- [x] ", true)] where line.hasPrefix(marker) {
      let title = line.dropFirst(marker.count).trimmingCharacters(in: .whitespaces)
      return title.isEmpty ? nil : (title, isDone)
    }
    return nil
  }
}
