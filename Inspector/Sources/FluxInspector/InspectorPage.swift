import Foundation

/// The page of the inspector: HTML, a script and a style sheet, served as they are or put
/// together into one self-contained file.
public enum InspectorPage {
  /// The page as the server serves it: it loads `/inspector.css`, `/diff.js`, `/costs.js`,
  /// `/inspector.js` and `/log`.
  public static var html: String { resource("index.html") }
  /// The page's script.
  public static var script: String { resource("inspector.js") }
  /// The scripts the page loads before its script, in order, by name: its diff (`diff.js`) and
  /// its list of the slowest commits (`costs.js`).
  static let helperScripts = ["diff.js", "costs.js"]
  /// The text of one of ``helperScripts``.
  static func helperScript(_ name: String) -> String { resource(name) }
  /// The page's style sheet.
  public static var style: String { resource("inspector.css") }

  /// One HTML file with the style, the script and the log `document` (as ``LogDocument`` makes
  /// it) inside: it opens from disk, with no server and no live updates.
  ///
  /// - Parameter document: The log, as JSON text.
  /// - Returns: The HTML text.
  public static func selfContained(document: String) -> String {
    // Inside a `<script>` element, "</script" would end it, and "<!--" change how it is read:
    // every "<" is escaped, which JSON allows, as it can only be in a string. The script and
    // style are ours and hold no "</script" or "</style".
    let data = document.replacingOccurrences(of: "<", with: "\\u003c")
    var html = html
    for name in helperScripts {
      html = html.replacingOccurrences(
        of: "<script src=\"\(name)\"></script>", with: "<script>\n\(helperScript(name))</script>")
    }
    return html.replacingOccurrences(
      of: "<link rel=\"stylesheet\" href=\"inspector.css\">", with: "<style>\n\(style)</style>"
    ).replacingOccurrences(
      of: "<script src=\"inspector.js\"></script>",
      with: "\(dataElement)\(data)</script>\n<script>\n\(script)</script>")
  }

  /// The start of the element that holds the log in a self-contained page: what tells a page
  /// that flux-inspector wrote from any other file.
  static let dataElement = "<script id=\"flux-log\" type=\"application/json\">"

  private static func resource(_ name: String) -> String {
    guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Page"),
      let text = try? String(contentsOf: url, encoding: .utf8)
    else {
      preconditionFailure("flux-inspector: its page, \(name), is missing from its resources: build it again")
    }
    return text
  }
}
