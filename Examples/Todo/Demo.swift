import Foundation

/// The session `todo --demo` runs.
enum Demo {
  static var script: [String] {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("todo-demo").path
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
}
