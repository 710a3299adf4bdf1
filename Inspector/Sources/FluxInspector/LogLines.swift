import FluxDevtools
import Foundation

/// The lines of an action log, each checked on its own by `Recording` and made ready for the
/// page: the lines that read as JSON objects `{"line": N, "raw": "…"}` (the line's own text,
/// which the page parses), the others as `{"line": N, "error": "…", "raw": "…"}` with
/// `Recording`'s message, or with where the line is not JSON as the page reads it, or the key
/// that it writes twice (see ``StrictJSON``). Line numbers are those of the file, counted from 1;
/// blank lines are skipped, as `Recording` skips them.
public struct LogLines: Sendable {
  /// One JSON object per non-blank line, in the order of the file.
  public var entries: [String]
  /// The bytes up to and including the last line break: the lines read whole.
  public var completeBytes: Int
  /// How many lines ended in a line break: the next line's number, less one.
  public var completeLines: Int
  /// Whether the last entry is a line without its line break yet (a line being written, or a
  /// log cut short): shown, but read again once its line break comes.
  public var endsInPartialLine: Bool

  /// The longest piece of a bad line that goes to the page with its error.
  static let shownBadLineLength = 2000

  /// Reads the lines in `bytes`.
  ///
  /// - Parameters:
  ///   - bytes: Lines of a log: from its start, or from the start of a line.
  ///   - firstLine: The number of the first line in the file.
  ///   - includePartialLine: Whether text after the last line break is read too.
  ///   - concurrently: Whether the lines are checked on every core, on Dispatch's threads (which
  ///     on Linux also answer the server's requests): for a whole log, read once.
  public init(_ bytes: ArraySlice<UInt8>, firstLine: Int = 1, includePartialLine: Bool, concurrently: Bool = true) {
    completeBytes = 0
    completeLines = 0
    endsInPartialLine = false
    // First where the lines are, which is quick; then each line read on its own, which is not,
    // so on every core.
    var lines: [(range: Range<Int>, number: Int, isComplete: Bool)] = []
    var start = bytes.startIndex
    var number = firstLine
    while start < bytes.endIndex {
      let lineBreak = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
      guard lineBreak != nil || includePartialLine else { break }
      let end = lineBreak ?? bytes.endIndex
      lines.append((start..<end, number, lineBreak != nil))
      if let lineBreak {
        start = lineBreak + 1
        completeBytes = start - bytes.startIndex
        completeLines += 1
        number += 1
      } else {
        start = end
      }
    }
    let entry = { @Sendable (line: (range: Range<Int>, number: Int, isComplete: Bool)) in
      Self.entry(bytes[line.range], number: line.number, isComplete: line.isComplete)
    }
    let read = concurrently ? Self.concurrentMap(lines, entry) : lines.map(entry)
    entries = read.compactMap { $0 }
    endsInPartialLine = lines.last.map { !$0.isComplete && read.last! != nil } ?? false
  }

  /// `transform` of each element, in order, worked out on every core for long arrays.
  private static func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: [Element], _ transform: @escaping @Sendable (Element) -> Result
  ) -> [Result] {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    guard elements.count >= 256, cores > 1 else { return elements.map(transform) }
    let chunks = cores * 4
    let size = (elements.count + chunks - 1) / chunks
    var results = [[Result]](repeating: [], count: chunks)
    results.withUnsafeMutableBufferPointer { buffer in
      nonisolated(unsafe) let buffer = buffer
      DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
        let range = min(chunk * size, elements.count)..<min((chunk + 1) * size, elements.count)
        // Each chunk writes its own element of `buffer` only.
        buffer[chunk] = elements[range].map(transform)
      }
    }
    return results.flatMap { $0 }
  }

  /// The entry of one line, or `nil` for a blank one.
  static func entry(_ line: ArraySlice<UInt8>, number: Int, isComplete: Bool) -> String? {
    let content = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
    guard !content.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") })
    else { return nil }
    guard let text = String(validating: content, as: UTF8.self) else {
      return badEntry(number, "the line is not UTF-8 text", String(decoding: content, as: UTF8.self))
    }
    // The line on its own, as the last line of a log when it has no line break yet: so that
    // `Recording` tells a line cut short only where the log ends.
    do {
      let recording = try Recording(jsonLines: isComplete ? text + "\n" : text)
      guard !recording.entries.isEmpty else { return nil }
    } catch {
      return badEntry(number, error.message, text)
    }
    let bom = "\u{FEFF}"
    let json = text.hasPrefix(bom) ? String(text.dropFirst()) : text
    let bomBytes: [UInt8] = [0xEF, 0xBB, 0xBF]
    if let problem = StrictJSON.problem(in: content.starts(with: bomBytes) ? content.dropFirst(3) : content) {
      return badEntry(number, problem, text)
    }
    return "{\"line\":\(number),\"raw\":\(JSONText.string(json))}"
  }

  private static func badEntry(_ number: Int, _ message: String, _ text: String) -> String {
    let shown =
      text.count > shownBadLineLength ? String(text.prefix(shownBadLineLength)) + "…" : text
    return "{\"line\":\(number),\"error\":\(JSONText.string(message)),\"raw\":\(JSONText.string(shown))}"
  }
}

/// JSON text written by hand, where encoding a whole structure would cost more than it brings.
enum JSONText {
  /// `text` as a JSON string, quotes included: `"` and `\` escaped with a backslash, control
  /// characters as `\u00XX`, everything else as it is (UTF-8, which JSON allows).
  ///
  /// One pass over the bytes, into a string of the right size: for a line of a log (420 bytes),
  /// 0.6 µs optimized and 14 µs in a debug build, where Foundation's encoder took 16 to 18 µs in
  /// both; every line of every log and of every app goes through here.
  static func string(_ text: String) -> String {
    var text = text
    return text.withUTF8 { source in
      var extra = 0
      for byte in source where byte == 0x22 || byte == 0x5C || byte < 0x20 {
        extra += byte < 0x20 ? 5 : 1
      }
      return String(unsafeUninitializedCapacity: source.count + extra + 2) { out in
        let hex: StaticString = "0123456789abcdef"
        var at = 0
        out[at] = 0x22
        at += 1
        for byte in source {
          if byte == 0x22 || byte == 0x5C {
            out[at] = 0x5C
            out[at + 1] = byte
            at += 2
          } else if byte < 0x20 {
            out[at] = 0x5C
            out[at + 1] = UInt8(ascii: "u")
            out[at + 2] = UInt8(ascii: "0")
            out[at + 3] = UInt8(ascii: "0")
            out[at + 4] = hex.utf8Start[Int(byte >> 4)]
            out[at + 5] = hex.utf8Start[Int(byte & 0x0F)]
            at += 6
          } else {
            out[at] = byte
            at += 1
          }
        }
        out[at] = 0x22
        return at + 1
      }
    }
  }
}
