import Foundation

/// What a page asks of `/rows?from=P&count=N&identity=ID` (and `store=`, `action=`, `outcome=`,
/// `q=` for the filters, `counts=1` for the names of the filters' lists, `at=EVENT` for where an
/// event is among the rows that pass) or of
/// `/entry?index=I&identity=ID`.
///
/// Every number is read digit by digit and bounded before anything counts with it, and every
/// text is bounded in length: a request comes from any page the browser shows (rule 21). A name
/// given twice, or a value out of range, is refused with a message that says which.
struct RowsQuery: Equatable {
  /// The position of the first row asked for.
  var from = 0
  /// How many rows, at most ``LogRows/largestCount``.
  var count = 0
  /// Whether the names of the stores and actions come with their counts.
  var counts = false
  /// The entry asked for by `/entry`.
  var index = 0
  /// An event whose position among the rows that pass is asked for: that of the first at or
  /// after it, or of the last.
  var at: Int?
  var filter = LogRows.Filter()
  let identity: LogIdentity
  /// The longest text of a filter, in bytes.
  static let largestText = 1000

  /// Reads the parameters of the request, percent-decoded, in their order.
  init(_ parameters: some Sequence<(key: Substring, value: Substring)>) throws(InspectorError) {
    let parameters = Array(parameters)
    func value(_ name: Substring) throws(InspectorError) -> Substring? {
      let values = parameters.filter { $0.key == name }
      guard values.count <= 1 else { throw InspectorError("\(name) is given twice: give it once") }
      return values.first?.value
    }
    func number(_ name: Substring, in range: ClosedRange<Int>) throws(InspectorError) -> Int? {
      guard let text = try value(name) else { return nil }
      guard let number = decimal(text), number <= UInt64(range.upperBound), Int(number) >= range.lowerBound else {
        throw InspectorError(
          "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text.prefix(40))\"")
      }
      return Int(number)
    }
    func text(_ name: Substring) throws(InspectorError) -> String {
      guard let text = try value(name) else { return "" }
      guard text.utf8.count <= Self.largestText else {
        throw InspectorError("\(name) is longer than \(Self.largestText) bytes: give a shorter one")
      }
      return String(text)
    }
    guard let identity = try value("identity") else {
      throw InspectorError("identity is missing: give the identity /log gave")
    }
    guard let file = LogIdentity(identity) else {
      throw InspectorError("identity must name the log's file as /log gives it, not \"\(identity.prefix(40))\"")
    }
    self.identity = file
    from = try number("from", in: 0...EventsQuery.largestNumber) ?? 0
    count = try number("count", in: 0...LogRows.largestCount) ?? 0
    index = try number("index", in: 0...EventsQuery.largestNumber) ?? 0
    at = try number("at", in: 0...EventsQuery.largestNumber)
    counts = try value("counts") == "1"
    filter = LogRows.Filter(
      store: try text("store"), action: try text("action"), outcome: try text("outcome"),
      text: try text("q").trimmingCharacters(in: .whitespaces))
  }
}
