/// The whole log as the page loads it: a JSON object with the log's path, its entries (see
/// ``LogLines``), and where live updates go on from.
///
/// ```json
/// {"path":"session.jsonl","end":1234,"lines":12,"partial":false,"entries":[{"line":1,"raw":"…"}]}
/// ```
///
/// `end` is the byte after the last line break and `lines` the number of lines before it: the
/// page asks `/events?from=END&line=LINES+1` for what comes next. When `partial` is true, the
/// last entry is a line still without its line break; the next update reads it again.
public enum LogDocument {
  /// Reads the log at `path` and returns it as the page loads it.
  ///
  /// - Parameter path: The log's path.
  /// - Returns: The JSON text.
  /// - Throws: An ``InspectorError`` when the log cannot be read.
  public static func json(path: String) throws(InspectorError) -> String {
    let contents = try LogFile.read(path: path)
    let lines = LogLines(contents.bytes[...], includePartialLine: true)
    return json(path: path, lines: lines, end: lines.completeBytes)
  }

  /// The JSON text of `lines`, which end at byte `end` of the log at `path`.
  static func json(path: String, lines: LogLines, end: Int) -> String {
    json(
      path: path, entries: lines.entries, end: end, lines: lines.completeLines, partial: lines.endsInPartialLine)
  }

  /// The JSON text of `entries`, of which `lines` lines end at byte `end` of the log at `path`.
  static func json(path: String, entries: [String], end: Int, lines: Int, partial: Bool) -> String {
    var text = "{\"path\":\(JSONText.string(path)),\"end\":\(end),\"lines\":\(lines),"
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
