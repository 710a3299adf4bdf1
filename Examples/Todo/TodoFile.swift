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

  /// Reads `folder/todo.md`, or throws what is wrong with it.
  static func read(folder: URL) throws(CommandError) -> [ListSnapshot] {
    let file = folder.appendingPathComponent(name)
    guard FileManager.default.fileExists(atPath: file.path) else {
      throw CommandError("there is no \(file.path); save writes it")
    }
    let text: String
    do {
      text = try String(contentsOf: file, encoding: .utf8)
    } catch {
      throw CommandError("cannot read \(file.path): \(error.localizedDescription)")
    }
    do {
      return try parse(text)
    } catch {
      throw CommandError("cannot load \(file.path): \(error.message)")
    }
  }

  /// The lists in `text`, each item numbered from 1, or what is wrong, with its line.
  static func parse(_ text: String) throws(CommandError) -> [ListSnapshot] {
    let last = text.split(whereSeparator: \.isNewline).last { !$0.allSatisfy(\.isWhitespace) }
    guard let last, last.hasPrefix("<!-- end of todo:") else {
      throw CommandError("the file is cut short: its end line is missing")
    }
    var lists: [ListSnapshot] = []
    var sawHeader = false
    var trailer: (line: Int, text: String)?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let number = index + 1
      let line = String(line)
      if line.allSatisfy(\.isWhitespace) { continue }
      if trailer != nil { throw CommandError("line \(number): there is text after the end line") }
      if !sawHeader {
        guard line == header else { throw CommandError("line \(number): a todo file starts with \"\(header)\"") }
        sawHeader = true
      } else if line.hasPrefix("## ") {
        let name = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw CommandError("line \(number): a list has no name") }
        guard !lists.contains(where: { $0.name.lowercased() == name.lowercased() }) else {
          throw CommandError("line \(number): there are two lists named \"\(name)\"")
        }
        lists.append(ListSnapshot(name: name, items: []))
      } else if let item = item(line, id: (lists.last?.items.count ?? 0) + 1) {
        guard !lists.isEmpty else { throw CommandError("line \(number): an item comes before any list") }
        lists[lists.count - 1].items.append(item)
      } else if line.hasPrefix("<!-- end of todo:") {
        trailer = (number, line)
      } else {
        throw CommandError("line \(number): not a list, an item or the end line: \(line)")
      }
    }
    guard let trailer, trailer.text == Self.trailer(lists: lists.count) else {
      throw CommandError("line \(trailer?.line ?? 0): the end line does not count \(lists.count) lists")
    }
    guard !lists.isEmpty else { throw CommandError("the file has no lists") }
    return lists
  }

  /// `- [ ] title` or `- [x] title`.
  private static func item(_ line: String, id: Int) -> TodoItem? {
    for (marker, isDone) in [("- [ ] ", false), ("- [x] ", true)] where line.hasPrefix(marker) {
      let title = line.dropFirst(marker.count).trimmingCharacters(in: .whitespaces)
      return title.isEmpty ? nil : TodoItem(id: id, title: title, isDone: isDone)
    }
    return nil
  }
}
