/// What a page asks of `/events?from=BYTE&line=N&identity=ID`: to follow the log from byte
/// `BYTE`, whose line is line `N`, of the file that `ID` names (see ``LogIdentity``), as
/// ``LogDocument`` gave them.
///
/// Every number is read digit by digit and bounded before anything counts with it: a request
/// comes from any page the browser shows, and a number that traps stops the server (rule 21).
/// Anything else (a sign, a space, an exponent, a number too large, a name given twice) is
/// refused with a message that says which part is wrong.
struct EventsQuery: Equatable {
  /// The first byte to follow from: the end of the whole lines the page has.
  let from: Int
  /// The number of the line that starts at `from`.
  let line: Int
  /// The file the page read.
  let identity: LogIdentity
  /// The largest offset or line number read from a request: more than any log holds, and
  /// exact in the page's numbers (2^53 − 1).
  static let largestNumber = 9_007_199_254_740_991

  /// Reads the query of the request, without its `?`.
  ///
  /// - Throws: An ``InspectorError`` that names the part that is missing or wrong.
  init(_ query: String?) throws(InspectorError) {
    var values: [Substring: Substring] = [:]
    for part in (query ?? "").split(separator: "&") {
      let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = pair[0]
      guard ["from", "line", "identity"].contains(name) else { continue }
      guard values[name] == nil else { throw InspectorError("\(name) is given twice: give it once") }
      values[name] = pair.count == 2 ? pair[1] : ""
    }
    let largest = Self.largestNumber
    guard let from = values["from"] else { throw Self.missing("from") }
    guard let offset = decimal(from), offset <= UInt64(largest) else {
      throw InspectorError("from must be a byte offset, a whole number from 0 to \(largest), not \(Self.shown(from))")
    }
    guard let line = values["line"] else { throw Self.missing("line") }
    guard let number = decimal(line), (1...UInt64(largest)).contains(number) else {
      throw InspectorError("line must be a line number, a whole number from 1 to \(largest), not \(Self.shown(line))")
    }
    guard let identity = values["identity"] else { throw Self.missing("identity") }
    guard let file = LogIdentity(identity) else {
      throw InspectorError("identity must name the log's file as /log gives it, not \(Self.shown(identity))")
    }
    self.from = Int(offset)
    self.line = Int(number)
    self.identity = file
  }

  private static func missing(_ name: String) -> InspectorError {
    InspectorError("\(name) is missing: ask for /events?from=BYTE&line=N&identity=ID as /log gives them")
  }

  /// A value from the request, in quotes, cut short if long.
  private static func shown(_ value: Substring) -> String {
    "\"" + (value.count > 40 ? value.prefix(40) + "…" : value) + "\""
  }
}
