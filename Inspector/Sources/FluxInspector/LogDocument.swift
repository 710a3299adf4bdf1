/// The whole log as the page loads it: a JSON object with the log's path, the file it was read
/// from, its entries (see ``LogLines``), and where live updates go on from.
///
/// ```json
/// {"path":"session.jsonl","file":"2049-1311-1234-12-…","end":1234,"lines":12,"partial":false,
///  "entries":[{"line":1,"raw":"…"}]}
/// ```
///
/// `end` is the byte after the last line break and `lines` the number of lines before it;
/// `file` says which file that was, and what it held up to there. The page asks
/// `/events?from=END&line=LINES+1&file=FILE` for what comes next, and each `lines` event
/// carries the same three fields for where it ends. When `partial` is true, the last entry is
/// a line still without its line break; the next update reads it again.
public enum LogDocument {
  /// Reads the log at `path` and returns it as the page loads it.
  ///
  /// - Parameter path: The log's path.
  /// - Returns: The JSON text.
  /// - Throws: An ``InspectorError`` when the log cannot be read.
  public static func json(path: String) throws(InspectorError) -> String {
    json(path: path, contents: try LogFile.read(path: path))
  }

  /// The JSON text of the whole log at `path`, read as `contents`.
  static func json(path: String, contents: LogFile.Contents) -> String {
    let lines = LogLines(contents.bytes[...], includePartialLine: true)
    let mark = LogMark(start: contents.identity).advanced(
      over: contents.bytes[..<lines.completeBytes], lines: lines.completeLines)
    return json(
      path: path, entries: lines.entries, end: mark.offset, lines: mark.lines, partial: lines.endsInPartialLine,
      file: mark.token)
  }

  /// The JSON text of `entries`, of which `lines` lines end at byte `end` of the log at `path`,
  /// in the file that `file` names.
  static func json(path: String, entries: [String], end: Int, lines: Int, partial: Bool, file: String) -> String {
    var text = "{\"path\":\(JSONText.string(path)),\"file\":\"\(file)\",\"end\":\(end),\"lines\":\(lines),"
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
