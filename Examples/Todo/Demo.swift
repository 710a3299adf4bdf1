import Foundation

/// The session `todo --demo` runs.
enum Demo {
  /// The commands, saving to a new folder of their own (`todo-demo-` and six characters, in
  /// the temporary folder), as a save does not replace a `todo.md` the session never read.
  static var script: [String] {
    let folder = newFolder()
    return [
      "# Each list is a store of its own. Inbox exists from the start.",
      "add Call the plumber",
      "add Renew the passport",
      "done 1",
      "# A second list, and a third: two more stores.",
      "new Groceries",
      "add Milk",
      "add Bread",
      "add Coffee",
      "done 2",
      "done 3",
      "new Work",
      "add Review the pull request",
      "lists",
      "# A bad command changes nothing.",
      "done 7",
      "# One global action reaches every list's store.",
      "clear all",
      "use Inbox",
      "show",
      "# Saving is an async action; each step is committed and shown as it happens.",
      "save \(folder)",
    ]
  }

  /// A new folder in the temporary folder; if none can be made, the path of one, which the
  /// save then says it cannot write.
  private static func newFolder() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("todo-demo-XXXXXX").path
    var template = Array(path.utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return made.map { String(cString: $0) } ?? path
  }
}
