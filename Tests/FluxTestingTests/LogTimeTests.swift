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
