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

  /// Rule 21: the server and the page read a line the same way. A browser keeps the last of
  /// two values of one key, a decoder may keep the first: such a line is an error for both.
  @Test(
    arguments: [
      (Fixture.line(extra: #""store":"b","#), #"the key "store" is written twice"#),
      (Fixture.line(extra: #""outcome":"cancelled","#), #"the key "outcome" is written twice"#),
      (Fixture.line(action: #"{"add":{"_0":1,"_0":2}}"#), #"the key "_0" is written twice, in "action.add""#),
      (
        Fixture.line(extra: #""state":{"items":[{"id":1},{"id":2,"id":3}]},"#),
        #"the key "id" is written twice, in "state.items[1]""#
      ),
      (Fixture.line(extra: #""st\u0061te":1,"state":2,"#), #"the key "state" is written twice"#),
      (Fixture.line(extra: #""dispatch":"d","dispatch":"e","#), #"the key "dispatch" is written twice"#),
    ])
  func aLineThatWritesAKeyTwiceIsAnErrorThatNamesTheKey(line: String, message: String) throws {
    let read = lines(Fixture.line() + "\n" + line + "\n")
    let entries = try objects(read)
    #expect(entries[0]["error"] == nil)
    #expect(entries[1]["line"] as? Int == 2)
    #expect(entries[1]["error"] as? String == message)
    #expect(entries[1]["raw"] as? String == line)
  }

  @Test func keysThatOnlyLookAlikeAreNotTakenForOneKey() throws {
    let line = Fixture.line(extra: #""state":{"cafe":1,"caf\u00e9":2,"a":{"b":1},"b":{"b":2}},"#)
    #expect(try objects(lines(line + "\n"))[0]["error"] == nil)
  }

  /// Rule 21: "e" with a combining accent and "é" are one key to a Swift dictionary, which
  /// keeps one of their values, and two to a browser: the page calls such a line bad, and so
  /// does the server.
  @Test func keysThatAreCanonicallyEquivalentAreOneKeyWrittenTwice() throws {
    let line = Fixture.line(extra: #""state":{"a":{"cafe\u0301":1,"caf\u00e9":2}},"#)
    let error = try objects(lines(line + "\n"))[0]["error"] as? String
    #expect(error == #"the key "café" is written twice, in "state.a""#)
  }

  /// Rule 21: the server and the page read a line the same way. The page reads every value as
  /// JSON writes it; a line that `Recording` reads, but that is not JSON where `Recording` does
  /// not look, is a bad line for the server too, with the page's message.
  @Test(
    arguments: [
      (#""state":[1,2,],"#, "not JSON: an unexpected character at character 68"),
      (#""state":{"a":1,},"#, "not JSON: a key that is not a string at character 70"),
      (#""state":01,"#, "not JSON: no comma or } after a value at character 64"),
      (#""state":1.,"#, "not JSON: no comma or } after a value at character 64"),
      (#""state":1e,"#, "not JSON: no comma or } after a value at character 64"),
      (#""state":-,"#, "not JSON: an unexpected character at character 63"),
      (#""state":"\x41","#, "not JSON: a bad escape at character 64"),
      (#""state":"\u00g1","#, "not JSON: a bad \\u escape at character 64"),
      ("\"state\":\"a\tb\",", "not JSON: a control character in a string at character 65"),
      ("\"state\":\"a\u{0}b\",", "not JSON: a control character in a string at character 65"),
      ("\"st\u{E9}\":\"\u{E9}\"\t,", ""),
    ])
  func aLineThatIsNotJSONWhereRecordingDoesNotLookIsAnError(extra: String, message: String) throws {
    let line = Fixture.line(extra: extra)
    let entry = try objects(lines(line + "\n"))[0]
    if message.isEmpty {
      #expect(entry["error"] == nil, "\(line)")
    } else {
      #expect(entry["error"] as? String == message, "\(line)")
      #expect(entry["raw"] as? String == line)
    }
  }

  @Test func aDeeplyNestedLineIsReadWithoutRecursion() throws {
    let deep = String(repeating: #"{"a":"#, count: 500) + "1" + String(repeating: "}", count: 500)
    let line = Fixture.line(extra: #""state":\#(deep),"#)
    #expect(try objects(lines(line + "\n"))[0]["error"] == nil)
    let twice = String(repeating: #"{"a":"#, count: 500) + #"{"k":1,"k":2}"# + String(repeating: "}", count: 500)
    let read = lines(Fixture.line(extra: #""state":\#(twice),"#) + "\n")
    let message = try #require(try objects(read)[0]["error"] as? String)
    #expect(message.hasPrefix(#"the key "k" is written twice, in "state.a.a."#))
  }

  /// Messages are for a person who reads the log: they name JSON's kinds of value, never the
  /// Swift types that read them.
  @Test(
    arguments: [
      ("[1,2]", "not an action of the log (the line is not an object)"),
      ("5", "not an action of the log (the line is not an object)"),
      (Fixture.line(store: "a").replacingOccurrences(of: #""a""#, with: "5"), #"("store" is not a string)"#),
      (Fixture.line(extra: #""holds":"x","#), #"("holds" is not an array)"#),
      (Fixture.line(extra: #""sequence":"x","#), #"("sequence" is not a whole number)"#),
      (Fixture.line(outcome: "maybe"), #"("outcome" is none of the values the log writes there)"#),
    ])
  func messagesNameNoSwiftType(line: String, message: String) throws {
    let error = try #require(try objects(lines(line + "\n"))[0]["error"] as? String)
    #expect(error.hasSuffix(message) && error.hasPrefix("not an action of the log ("), "\(error)")
    for word in ["Dictionary", "Array<", "UInt64", "String", "Int", "ActionOutcome", "Index "] {
      #expect(!error.contains(word), "\(error)")
    }
  }
}

@Suite("JSON strings written by hand")
struct JSONTextTests {
  @Test(arguments: [
    "", "plain", #"a "quoted" \ back\slash"#, "tab\there, line\nbreak, return\r, nul\u{0}, bell\u{7}, unit\u{1F}",
    "é, 日本, 🦊, \u{2028}\u{2029}", "delete\u{7F}", #"{"store":"a","x":"\"}"#,
  ])
  func aStringWrittenAsJSONReadsBackAsItself(text: String) throws {
    let written = JSONText.string(text)
    let read = try JSONSerialization.jsonObject(with: Data(written.utf8), options: [.fragmentsAllowed]) as? String
    #expect(read == text, "\(written)")
  }
}
