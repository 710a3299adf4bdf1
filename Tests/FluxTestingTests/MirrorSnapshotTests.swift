import FluxCore
import FluxReactive
import FluxTesting
import Foundation
import Testing

/// `snapshots: .mirror`: a state that is not `Encodable`, written as `Mirror` shows it, under
/// `"stateMirror"`, read-only.
@Suite("Mirror snapshots")
struct MirrorSnapshotTests {
  /// The lines a garden store writes for `actions`, with `.mirror` snapshots.
  static func gardenLines(_ actions: [GardenAction], fields: ActionLog.Fields = []) -> [String] {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: fields)
    let store = Store<GardenState>(
      state: GardenState(), mutations: .init(), executor: .immediate,
      middlewares: [log.middleware(label: "garden", snapshots: .mirror)])
    for action in actions { store.actions.dispatch(action: action) }
    log.flush()
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
    return lines.all
  }

  /// The JSON object of `line`.
  static func object(_ line: String) throws -> [String: Any] {
    try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any])
  }

  /// The `fields` of a struct or class node.
  static func fields(_ node: Any?) throws -> [String: Any] {
    try #require((node as? [String: Any])?["fields"] as? [String: Any])
  }

  @Test("a state of nested structs, enums, classes and a cycle is written as `stateMirror`, never as `state`")
  func stateIsWrittenAsStateMirror() throws {
    let lines = Self.gardenLines([.plant(bed: 0, .rose(color: "red")), .rain(millimetres: 4)])
    #expect(lines.count == 2)
    let line = try Self.object(try #require(lines.last))
    #expect(line["state"] == nil)
    let root = try #require(line["stateMirror"] as? [String: Any])
    #expect(root["kind"] as? String == "class")
    #expect(root["type"] as? String == "GardenState")
    #expect(root["id"] as? Int == 1)
    let garden = try Self.fields(root)
    #expect(garden["name"] as? String == "Garden")
    #expect(garden["note"] is NSNull)

    // An array of structs that hold an array of enums with payloads.
    let beds = try #require(garden["beds"] as? [String: Any])
    #expect(beds["kind"] as? String == "collection")
    #expect(beds["type"] as? String == "Array<Bed>")
    #expect(beds["count"] as? Int == 1)
    let bed = try #require((beds["elements"] as? [Any])?.first as? [String: Any])
    #expect(bed["kind"] as? String == "struct")
    let plants = try #require(try Self.fields(bed)["plants"] as? [String: Any])
    let rose = try #require((plants["elements"] as? [Any])?.last as? [String: Any])
    #expect(rose["kind"] as? String == "enum")
    #expect(rose["case"] as? String == "rose")
    let color = try #require(rose["payload"] as? [String: Any])
    #expect(color["kind"] as? String == "tuple")
    #expect(color["labels"] as? [String] == ["color"])
    #expect(color["elements"] as? [String] == ["red"])

    // An enum case with a labelled payload, and one without.
    let weather = try #require(garden["weather"] as? [String: Any])
    #expect(weather["case"] as? String == "rain")
    #expect((weather["payload"] as? [String: Any])?["elements"] as? [Double] == [4])
    let season = try #require(garden["season"] as? [String: Any])
    #expect(season["kind"] as? String == "enum")
    #expect(season["case"] as? String == "spring")
    #expect(season["payload"] == nil)

    // A tuple, a dictionary, a set.
    let corner = try #require(garden["corner"] as? [String: Any])
    #expect(corner["kind"] as? String == "tuple")
    #expect(corner["labels"] as? [String] == ["x", "y"])
    #expect((corner["elements"] as? [Any])?.count == 2)
    let counts = try #require(garden["counts"] as? [String: Any])
    #expect(counts["kind"] as? String == "dictionary")
    let entry = try #require((counts["entries"] as? [Any])?.first as? [String: Any])
    #expect(entry["key"] as? String == "tulip")
    #expect(entry["value"] as? Int == 2)
    #expect((garden["tags"] as? [String: Any])?["kind"] as? String == "set")
  }

  @Test("an object met again, through a cycle or a shared reference, is written once and then as a `ref` to its id")
  func cyclesAndSharedObjectsAreWrittenOnce() throws {
    let line = try Self.object(try #require(Self.gardenLines([.rain(millimetres: 1)]).last))
    let garden = try Self.fields(line["stateMirror"])
    let shed = try #require(garden["shed"] as? [String: Any])
    #expect(shed["kind"] as? String == "class")
    let id = try #require(shed["id"] as? Int)
    let shedFields = try Self.fields(shed)
    // Its superclass's stored property too.
    #expect(shedFields["roof"] as? String == "tin")
    let cycle = try #require(shedFields["next"] as? [String: Any])
    #expect(cycle["kind"] as? String == "ref")
    #expect(cycle["id"] as? Int == id)
    #expect(cycle["type"] as? String == "Shed")
    let shared = try #require(garden["spare"] as? [String: Any])
    #expect(shared["kind"] as? String == "ref")
    #expect(shared["id"] as? Int == id)
  }

  @Test(
    "depth and size are bounded, each cut marked `…`: a long collection shows 100 elements, its count and how many it leaves out"
  )
  func boundsAreMarked() throws {
    let lines = Self.gardenLines([.rain(millimetres: 1)])
    let text = try #require(lines.last)
    let garden = try Self.fields(try Self.object(text)["stateMirror"])
    let seeds = try #require(garden["seeds"] as? [String: Any])
    #expect(seeds["count"] as? Int == 1000)
    let elements = try #require(seeds["elements"] as? [Any])
    #expect(elements.count == 101)
    #expect(elements.first as? Int == 0)
    let omitted = try #require(elements.last as? [String: Any])
    #expect(omitted["kind"] as? String == "…")
    #expect(omitted["reason"] as? String == "count")
    #expect(omitted["omitted"] as? Int == 900)

    // An indirect enum 100 links deep stops at 32 levels.
    var node: Any? = garden["chain"]
    var depth = 1
    while let link = node as? [String: Any], link["kind"] as? String == "enum" {
      node = link["payload"]
      depth += 1
    }
    let cut = try #require(node as? [String: Any])
    #expect(cut["kind"] as? String == "…")
    #expect(cut["reason"] as? String == "depth")
    #expect(cut["type"] as? String == "Chain")
    #expect(depth == 32)

    // A mirror that says it is an optional of itself ends too.
    let loop = try #require(garden["loop"] as? [String: Any])
    #expect(loop["kind"] as? String == "…")
    #expect(loop["reason"] as? String == "depth")

    // A long text is cut, with `…`.
    let long = try #require(garden["long"] as? String)
    #expect(long.utf8.count <= 1003)
    #expect(long.hasSuffix("…"))
  }

  @Test("a state of 10,000 values and more stops at the size bound, marked `…`, and the line stays small")
  func sizeIsBounded() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<GridState>(
      state: GridState(), mutations: .init(), executor: .immediate,
      middlewares: [log.middleware(label: "grid", snapshots: .mirror)])
    store.actions.dispatch(action: .fill)
    log.flush()
    withExtendedLifetime(store) {}
    let text = try #require(lines.all.last)
    #expect(text.utf8.count < 2_000_000)
    #expect(text.contains(#"{"kind":"…","reason":"size","type":"#))
  }

  @Test(
    "values that are not printable: a function, a type, a number JSON has none for, a Date; a Variable shows its value")
  func valuesThatAreNotPrintable() throws {
    let line = try Self.object(try #require(Self.gardenLines([.rain(millimetres: .nan)]).last))
    let garden = try Self.fields(line["stateMirror"])
    let function = try #require(garden["onWater"] as? [String: Any])
    #expect(function["kind"] as? String == "value")
    #expect(function["description"] as? String == "(Function)")
    let kind = try #require(garden["kind"] as? [String: Any])
    #expect(kind["kind"] as? String == "value")
    #expect(kind["description"] as? String == "Bed")
    #expect(((garden["weather"] as? [String: Any])?["payload"] as? [String: Any])?["elements"] as? [String] == ["NaN"])
    let planted = try #require(garden["planted"] as? [String: Any])
    #expect(planted["type"] as? String == "Date")
    #expect(planted["description"] as? String == "1970-01-01T00:00:01.000Z")
    let visits = try #require(garden["visits"] as? [String: Any])
    #expect(visits["kind"] as? String == "class")
    #expect(try Self.fields(visits) as? [String: Int] == ["value": 1])
  }

  @Test("a recording of Mirror snapshots cannot be used for time travel, nor read as states, and says why")
  func recordingRefusesMirrorSnapshots() throws {
    let lines = Self.gardenLines([.rain(millimetres: 2)], fields: [.all, .swift])
    let recording = try Recording(jsonLines: lines.joined())
    let entry = try #require(recording.entries.first)
    #expect(entry.hasStateMirror)
    #expect(!entry.hasState)
    #expect(try Self.object(lines[0])["stateForm"] as? String == "mirror")
    let read = #expect(throws: RecordingError.self) { try entry.state(as: JSONValueStandIn.self) }
    #expect(read?.description.hasPrefix("line 1: the state is a Mirror snapshot") == true)
    let travel = #expect(throws: RecordingError.self) {
      try TimeTravel(recording, label: "garden", from: CounterState())
    }
    #expect(travel?.description.contains("it is not read back as a Int, nor set back into a store") == true)
  }

  @Test(
    "a store on a queue fed from several threads writes a Mirror snapshot after each commit, its Variable read under its lock"
  )
  func mirrorSnapshotsFromSeveralThreads() async throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output)
    let store = Store<GardenState>(
      state: GardenState(), mutations: .init(),
      executor: .queue(DispatchQueue(label: "garden", attributes: .concurrent)),
      middlewares: [log.middleware(label: "garden", snapshots: .mirror)])
    let threads = 4
    let each = 50
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      for _ in 0..<each { store.actions.dispatch(action: .rain(millimetres: 1)) }
    }
    #expect(lines.waitForCount(threads * each, seconds: 120))
    log.flush()
    let visits = try lines.all.map { line in
      try #require(try Self.fields(try Self.fields(try Self.object(line)["stateMirror"])["visits"])["value"] as? Int)
    }
    #expect(visits == Array(1...(threads * each)))
    withExtendedLifetime(store) {}
  }
}

/// Any `Decodable` type: a Mirror snapshot is not read as one.
private struct JSONValueStandIn: Decodable {}

/// A garden: nested structs, enums with and without values, objects that refer to each other, a
/// tuple, collections, and values without a JSON form. Not `Encodable`.
final class GardenState: State, @unchecked Sendable {
  typealias Action = GardenAction
  typealias Mutations = GardenMutations

  // Written by the mutations only, whose commits never overlap; read by the log's `Mirror` in
  // `didCommit`, right after a commit, on the same executor.
  var name = "Garden"
  var beds: [Bed] = []
  var weather = Weather.sunny
  var season = Season.spring
  let shed = Shed()
  var spare: Shed?
  var counts: [String: Int] = ["tulip": 2]
  var tags: Set<String> = ["shade"]
  var corner: (x: Int, y: Double) = (1, 2.5)
  var note: String?
  var seeds = Array(0..<1000)
  var chain = Chain.end
  var long = String(repeating: "é", count: 800)
  var onWater: @Sendable () -> Void = {}
  var kind: Any.Type = Bed.self
  var planted = Date(timeIntervalSince1970: 1)
  let visits = Variable(0)
  var loop = SelfOptional()

  init() {
    shed.next = shed
    spare = shed
    for _ in 0..<100 { chain = .link(chain) }
  }
}

/// A value whose mirror says it is an optional that holds itself.
struct SelfOptional: CustomReflectable {
  var customMirror: Mirror {
    Mirror(self, children: [(label: "some", value: self)], displayStyle: .optional)
  }
}

struct Bed {
  let id: Int
  var plants: [Plant]
}

enum Plant {
  case rose(color: String)
  case tree(height: Double, name: String)
  case grass
}

enum Weather {
  case sunny
  case rain(millimetres: Double)
}

enum Season {
  case spring, autumn
}

indirect enum Chain {
  case end
  case link(Chain)
}

class Building {
  var roof = "tin"
}

final class Shed: Building {
  var tools = ["spade"]
  var next: Shed?
}

enum GardenAction: Codable, Equatable, Sendable {
  case plant(bed: Int, PlantKind)
  case rain(millimetres: Double)

  enum PlantKind: Codable, Equatable, Sendable {
    case rose(color: String)
    case grass
  }
}

struct GardenMutations: Mutations {
  func commit(action: GardenAction, state: GardenState) {
    state.visits.value += 1
    switch action {
    case .plant(let bed, let kind):
      while state.beds.count <= bed { state.beds.append(Bed(id: state.beds.count, plants: [.grass])) }
      switch kind {
      case .rose(let color): state.beds[bed].plants.append(.rose(color: color))
      case .grass: state.beds[bed].plants.append(.grass)
      }
    case .rain(let millimetres):
      state.weather = .rain(millimetres: millimetres)
    }
  }
}

/// A state of 40,000 values: 200 rows of 200 numbers, nested in structs.
final class GridState: State, @unchecked Sendable {
  typealias Action = GridAction
  typealias Mutations = GridMutations

  struct Row {
    var cells: [[Int]]
  }

  // Written by the mutations only, read by the log's `Mirror` right after, on the same executor.
  var rows: [Row] = []
}

enum GridAction: Codable, Equatable, Sendable {
  case fill
}

struct GridMutations: Mutations {
  func commit(action: GridAction, state: GridState) {
    state.rows = (0..<200).map { _ in GridState.Row(cells: (0..<200).map { [$0, $0] }) }
  }
}
