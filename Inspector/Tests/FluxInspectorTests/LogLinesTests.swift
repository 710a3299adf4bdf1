import FluxDevtools
import Foundation
import Testing

@testable import FluxInspector

@Suite("Lines of a log, made ready for the page")
struct LogLinesTests {
  private func lines(_ text: String, partial: Bool = true, first: Int = 1) -> LogLines {
    LogLines(Array(text.utf8)[...], firstLine: first, includePartialLine: partial)
  }

  private func objects(_ lines: LogLines) throws -> [[String: Any]] {
    try lines.entries.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
  }

  @Test func linesKeepTheNumbersOfTheFileAcrossBlankLinesAndCarriageReturns() throws {
    let read = lines(Fixture.line() + "\r\n\r\n  \n" + Fixture.line(store: "b") + "\n")
    #expect(try objects(read).map { $0["line"] as? Int } == [1, 4])
    #expect(try objects(read)[0]["raw"] as? String == Fixture.line())
    #expect(read.completeLines == 4)
    #expect(read.endsInPartialLine == false)
  }

  @Test func aLineWithoutItsLineBreakIsShownOnlyWhenAskedAndMarked() throws {
    let text = Fixture.line() + "\n" + Fixture.line(store: "b")
    let whole = lines(text)
    #expect(whole.entries.count == 2)
    #expect(whole.endsInPartialLine)
    #expect(whole.completeBytes == Fixture.line().utf8.count + 1)
    let complete = lines(text, partial: false)
    #expect(complete.entries.count == 1)
    #expect(complete.endsInPartialLine == false)
  }

  @Test func aBadLineInTheMiddleIsNotCalledCutShort() throws {
    let read = lines(#"{"store":"a","action":{"#.appending("\n") + Fixture.line() + "\n")
    let message = try #require(try objects(read)[0]["error"] as? String)
    #expect(!message.contains("cut short"))
    let last = lines(Fixture.line() + "\n" + #"{"store":"a","action":{"#)
    #expect(try objects(last)[1]["error"] as? String == "the line is cut short: the log ends in the middle of it")
  }

  @Test func anErrorLineOfTheLogIsShownWithItsMessage() throws {
    let read = lines(#"{"error":"the action X could not be encoded: no","store":"a"}"# + "\n")
    #expect(
      try objects(read)[0]["error"] as? String == "the log has an error here: the action X could not be encoded: no")
  }

  @Test func aLineThatIsNotUTF8IsAnError() throws {
    var bytes = Array(Fixture.line().utf8)
    bytes.insert(0xFF, at: 20)
    let read = LogLines((bytes + [0x0A])[...], includePartialLine: true)
    #expect(try objects(read)[0]["error"] as? String == "the line is not UTF-8 text")
  }

  @Test func aByteOrderMarkIsNotPartOfTheFirstLine() throws {
    let read = lines("\u{FEFF}" + Fixture.line() + "\n")
    #expect(try objects(read)[0]["raw"] as? String == Fixture.line())
  }

  @Test func newFieldsPassThroughAsTheyAre() throws {
    let line = Fixture.line(
      extra: #""dispatch":"d1","holds":[{"middleware":"Gate","nanoseconds":1500}],"sequence":7,"state":{"count":2},"#)
    #expect(try objects(lines(line + "\n"))[0]["raw"] as? String == line)
  }

  @Test func jsonStringsReadBackAsTheSameText() throws {
    let text = "</script> & <!-- \u{2028}\u{2029} \"q\" \\ \n\t\u{01}é😀"
    let encoded = JSONText.string(text)
    #expect(!encoded.contains("\n"))
    #expect(try JSONSerialization.jsonObject(with: Data(encoded.utf8), options: .fragmentsAllowed) as? String == text)
  }
}
