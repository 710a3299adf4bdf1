import Foundation
import Testing

@testable import FluxDevtools

@Suite("Action log times")
struct LogTimeTests {
  /// Instants of whole milliseconds from 1900 to 2200, leap days and the turns of years, days
  /// and the epoch among them.
  static let instants: [Int] = {
    var generator = SystemRandomNumberGenerator()
    let edges = [
      0, -1, 1, 86_399_999, -86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_400_000,
      4_107_456_000_000, 1_795_046_869_123, -2_208_988_800_000, 7_258_118_399_999,
    ]
    return edges + (0..<2000).map { _ in Int.random(in: -2_208_988_800_000...7_258_118_399_999, using: &generator) }
  }()

  @Test("a time is written as the date formatter writes it: ISO 8601, UTC, milliseconds")
  func writtenAsTheFormatterWrites() {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    for milliseconds in Self.instants {
      let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
      #expect(LogTime.string(from: date) == formatter.string(from: date), "\(milliseconds) ms")
    }
  }

  /// Instants anywhere in a millisecond, from 1583 (the formatter's calendar is Julian before
  /// October 1582) to 9999, and those half a millisecond from a whole one.
  static let anyInstants: [Double] = {
    var generator = SystemRandomNumberGenerator()
    let whole = (0..<1000).map { _ in Double(Int.random(in: -12_212_553_600_000...253_402_300_799_000)) / 1000 }
    return whole.flatMap { [$0 - 0.0005, $0 + 0.0005, $0 + 0.0004999, $0 - 0.0000001] }
      + (0..<4000).map { _ in Double.random(in: -12_212_553_600...253_402_300_799, using: &generator) }
  }()

  @Test("any instant is written as the date formatter writes it, to the nearest millisecond, up to the year 9999")
  func anyInstantWrittenAsTheFormatterWrites() {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    for seconds in Self.anyInstants {
      let date = Date(timeIntervalSince1970: seconds)
      #expect(LogTime.string(from: date) == formatter.string(from: date), "\(seconds) s")
    }
  }

  @Test("any written time up to the year 9999 reads back as the millisecond it names")
  func anyInstantReadsBack() {
    for seconds in Self.anyInstants {
      let text = LogTime.string(from: Date(timeIntervalSince1970: seconds))
      #expect(LogTime.date(from: text).map { LogTime.string(from: $0) } == text, "\(seconds) s")
    }
  }

  @Test("an instant outside the years 0000 to 9999 is written as the nearest time those years hold")
  func outOfRangeInstantsAreWrittenAtTheEdge() {
    let first = "0000-01-01T00:00:00.000Z"
    let last = "9999-12-31T23:59:59.999Z"
    let cases: [(Double, String)] = [
      (253_402_300_800, last), (1e13, last), (1e300, last), (.infinity, last),
      (-62_167_219_200.001, first), (-62_198_755_200, first), (-1e300, first), (-.infinity, first), (.nan, first),
      (-62_167_219_200, first), (253_402_300_799.999, last),
    ]
    for (seconds, expected) in cases {
      let text = LogTime.string(from: Date(timeIntervalSince1970: seconds))
      #expect(text == expected, "\(seconds) s")
      #expect(LogTime.date(from: text) != nil, "\(text)")
    }
  }

  @Test("a written time reads back as the same instant, to the millisecond")
  func readsBack() {
    for milliseconds in Self.instants {
      let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
      let text = LogTime.string(from: date)
      let read = LogTime.date(from: text)
      #expect(read.map { ($0.timeIntervalSince1970 * 1000).rounded() } == Double(milliseconds), "\(text)")
    }
  }

  @Test("days and calendar dates convert both ways over four centuries")
  func civilDatesRoundTrip() {
    for days in -146_097...146_097 {
      let (year, month, day) = LogTime.civilDate(daysSince1970: days)
      #expect(LogTime.daysSince1970(year: year, month: month, day: day) == days)
    }
  }
}
