import FluxCore
import FluxReactive
import FluxTesting
import Foundation
import Testing

/// Actions of many shapes, to write to a log and read back.
enum ShapeAction: Codable, Equatable, Sendable {
  struct Nested: Codable, Equatable, Sendable {
    var tags: [String: Int]
    var values: [Double]
    var maybe: Int?
    var date: Date
    var big: UInt64
    var small: Int64
    var decimal: Decimal
    var ratio: Float
  }

  case none
  case text(String)
  case pair(a: Int, b: String)
  case nested(Nested)
  case list([Nested?])
  case real(Double)
  case single(Float)
}

final class ShapeState: State {
  typealias Action = ShapeAction
  typealias Mutations = ShapeMutations
}

struct ShapeMutations: Mutations {
  func commit(action: ShapeAction, state: ShapeState) {}
}

@Suite("Action log round trip")
struct RoundTripTests {
  static let shapes: [ShapeAction] = [
    .none, .text(""), .text("é e\u{301} 👨‍👩‍👧 \"q\" \\ / \n\r\t \u{0} \u{2028} \u{FEFF}"),
    .text("NaN"), .text("Infinity"), .pair(a: Int.min, b: "{\"action\":1}\n{"),
    .nested(
      .init(
        tags: ["z": 1, "é": 2, "": 3], values: [0.1, 1e308, 123_456_789.123_456_789], maybe: nil,
        date: Date(timeIntervalSince1970: 1_800_000_000.123_456), big: UInt64.max, small: Int64.min,
        decimal: Decimal(string: "12345678901234567890.123456789")!, ratio: 0.1)),
    .list([nil]), .list([]), .real(.greatestFiniteMagnitude), .real(.infinity), .real(-.infinity),
    .single(.infinity), .single(-.infinity),
  ]

  /// The log of a store labelled `label` that committed `actions`, read back.
  private static func logged(_ actions: [ShapeAction], label: String) throws -> Recording {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<ShapeState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: label)])
    for action in actions { store.actions.dispatch(action: action) }
    log.flush()
    return try Recording(jsonLines: lines.text)
  }

  @Test("actions of every shape read back as written, infinities included, with no error line")
  func everyShapeReadsBack() throws {
    let recording = try Self.logged(Self.shapes, label: "s\n\"é")
    #expect(recording.entries.map(\.store) == Array(repeating: "s\n\"é", count: Self.shapes.count))
    #expect(try recording.entries.map { try $0.action(as: ShapeAction.self) } == Self.shapes)
  }

  @Test("a not-a-number in an action reads back as not-a-number")
  func notANumberReadsBack() throws {
    let actions = try Self.logged([.real(.nan), .single(.nan)], label: "s").entries.map {
      try $0.action(as: ShapeAction.self)
    }
    guard case .real(let real) = actions.first, case .single(let single) = actions.last else {
      Issue.record("read back as \(actions)")
      return
    }
    #expect(real.isNaN && single.isNaN)
  }

  @Test("an empty log, flushed twice, reads back as no actions")
  func emptyLog() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    log.flush()
    log.flush()
    #expect(try Recording(jsonLines: lines.text).entries.isEmpty)
  }
}
