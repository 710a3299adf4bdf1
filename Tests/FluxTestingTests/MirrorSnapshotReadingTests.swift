import Dispatch
import Foundation
import Synchronization
import Testing

@testable import FluxDevtools

/// How a Mirror snapshot reads a value by its type (``MirrorTypes``): what the casts to the
/// scalar and described types wrote, whichever way the type is read.
@Suite("Mirror snapshots read by type")
struct MirrorSnapshotReadingTests {
  /// The snapshot of `value`, on one line, keys sorted.
  static func written(_ value: Any) -> String {
    MirrorSnapshot.take(value).compact
  }

  @Test("a scalar is written as itself, inside an optional, an AnyHashable or an Any, at any nesting")
  func scalarsThroughWrappers() {
    for _ in 0..<2 {  // the second time, through what the first kept
      #expect(Self.written(5) == "5")
      #expect(Self.written(Int8(-3)) == "-3")
      #expect(Self.written(UInt64.max) == "18446744073709551615")
      #expect(Self.written(Float(0.1)) == "0.1")
      #expect(Self.written(Character("x")) == #""x""#)
      #expect(Self.written("abc".dropFirst()) == #""bc""#)
      #expect(Self.written(Int?.some(5) as Any) == "5")
      #expect(Self.written(String??.some("a") as Any) == #""a""#)
      #expect(Self.written(Int?.none as Any) == "null")
      #expect(Self.written(AnyHashable(7)) == "7")
      #expect(Self.written([AnyHashable("h"), AnyHashable(2)]).contains(#"["h", 2]"#))
      let optionals: [Int?] = [1, nil]
      #expect(Self.written(optionals).contains(#""elements": [1, null]"#))
      #expect(
        Self.written(Date?.some(Date(timeIntervalSince1970: 1)) as Any)
          == #"{"description": "1970-01-01T00:00:01.000Z", "kind": "value", "type": "Date"}"#)
    }
  }

  @Test("the cases of an enum are written by name, each its own, with or without a description of its own")
  func enumCasesByName() {
    for _ in 0..<2 {
      let seasons = Self.written([ReadSeason.spring, .autumn, .winter, .spring])
      #expect(seasons.contains(#"{"case": "spring""#))
      let cases = MirrorSnapshot.take([ReadSeason.spring, .autumn, .winter, .spring])
      guard case .object(let members) = cases, case .array(let elements)? = members["elements"] else {
        Issue.record("not a collection: \(seasons)")
        return
      }
      let names = elements.map { element -> String in
        guard case .object(let node) = element, case .string(let name)? = node["case"] else { return "?" }
        return name
      }
      #expect(names == ["spring", "autumn", "winter", "spring"])
      #expect(Self.written(ReadMood.calm).contains(#""case": "Calm!""#))
      #expect(Self.written(ReadMood.cross).contains(#""case": "Cross!""#))
      #expect(Self.written(ReadMark.none).contains(#""case": "none""#))
      #expect(Self.written(ReadMark.flagged(by: "Ann")).contains(#""case": "flagged""#))
      #expect(Self.written(ReadSingle.only).contains(#""case": "only""#))
    }
  }

  @Test("snapshots taken on several threads at once, of the same types, are each written whole and right")
  func snapshotsOnSeveralThreads() {
    let threads = 4
    let each = 300
    let wrong = Mutex(0)
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for index in 0..<each {
        let value = ReadRow(id: thread * each + index, season: index % 2 == 0 ? .spring : .winter, note: nil)
        let text = Self.written(value)
        let season = index % 2 == 0 ? "spring" : "winter"
        let expected =
          #"{"fields": {"id": \#(thread * each + index), "note": null, "season": {"case": "\#(season)", "kind": "enum", "#
          + #""type": "ReadSeason"}}, "kind": "struct", "type": "ReadRow"}"#
        if text != expected { wrong.withLock { $0 += 1 } }
      }
    }
    #expect(wrong.withLock { $0 } == 0)
  }

  @Test("an optional scalar past the depth limit is written as itself, as the cast there wrote it")
  func optionalScalarAtTheDepthLimit() {
    // 31 links, then a leaf whose payload, an optional, is at depth 32: the depth limit.
    var deep = ReadDeep.leaf(5)
    for _ in 0..<31 { deep = .next(deep) }
    var node = MirrorSnapshot.take(deep)
    var links = 0
    while case .object(let members) = node, let payload = members["payload"] {
      node = payload
      links += 1
    }
    #expect(links == 32)
    #expect(node == .integer(5))
  }
}

enum ReadSeason {
  case spring, summer, autumn, winter
}

enum ReadMood: CustomStringConvertible {
  case calm, cross

  var description: String { self == .calm ? "Calm!" : "Cross!" }
}

enum ReadMark {
  case none
  case flagged(by: String)
}

enum ReadSingle {
  case only
}

struct ReadRow {
  var id: Int
  var season: ReadSeason
  var note: String?
}

indirect enum ReadDeep {
  case next(ReadDeep)
  case leaf(Int?)
}
