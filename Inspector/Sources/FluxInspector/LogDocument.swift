/// The whole log as the page loads it: a JSON object with the log's path, the file it was read
/// from, its entries (see ``LogLines``), and where live updates go on from.
///
/// ```json
/// {"path":"session.jsonl","identity":"2049-1311-9f0c2b7d1e4a5c38","end":1234,"lines":12,
///  "partial":false,"entries":[{"line":1,"raw":"…"}]}
/// ```
///
/// `end` is the byte after the last line break and `lines` the number of lines before it;
/// `identity` names the file (see ``LogIdentity``). The page asks
/// `/events?from=END&line=LINES+1&identity=IDENTITY` for what comes next, and each `lines` event
/// carries the same fields for where it ends. When `partial` is true, the last entry is a line
/// still without its line break; the next update reads it again.
public enum LogDocument {
  /// Reads the log at `path` and returns it as the page loads it.
  ///
  /// - Parameter path: The log's path.
  /// - Returns: The JSON text.
  /// - Throws: An ``InspectorError`` when the log cannot be read.
  public static func json(path: String) throws(InspectorError) -> String {
    try read(path: path).document
  }

  /// Reads the log at `path`, and returns it as the page loads it, and the file it was read from.
  static func read(path: String) throws(InspectorError) -> (document: String, file: LogFile.Identity) {
    try LogFile.withOpenFile(path: path) { descriptor, file throws(InspectorError) in
      let bytes = try LogFile.read(descriptor, path: path, in: 0..<file.size)
      let lines = LogLines(bytes[...], includePartialLine: true)
      let document = json(
        path: path, entries: lines.entries, end: lines.completeBytes, lines: lines.completeLines,
        partial: lines.endsInPartialLine, identity: LogIdentity(of: file, descriptor: descriptor)?.text ?? "")
      return (document, file)
    }
  }

  /// The JSON text of `entries`, of which `lines` lines end at byte `end` of the log at `path`,
  /// in the file that `identity` names.
  static func json(
    path: String, entries: [String], end: Int, lines: Int, partial: Bool, identity: String
  ) -> String {
    var text = "{\"path\":\(JSONText.string(path)),\"identity\":\"\(identity)\",\"end\":\(end),"
    text += "\"lines\":\(lines),"
    text += "\"partial\":\(partial),\"entries\":["
    text.reserveCapacity(text.utf8.count + entries.reduce(0) { $0 + $1.utf8.count + 1 } + 2)
    for (index, entry) in entries.enumerated() {
      if index > 0 { text += "," }
      text += entry
    }
    text += "]}"
    return text
  }
}
