import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import FluxDevtools

/// Values for the tests of the `"swift"` field: each test writes, as code, the expression it
/// expects, so that the expected text is Swift that compiles to the same value.
enum LiteralShape: Equatable {
  case circle(radius: Double)
  case point
}

struct LiteralSample {
  var shape: LiteralShape
  var tags: Set<String>
  var sizes: [String: Int]
  var pair: (x: Int, y: Int)
  var maybe: Int?
}

enum LiteralWrapping {
  case sample(LiteralSample)
  case many(Int, String, flag: Bool)
}

final class LiteralBox {}

struct LiteralHoldsABox {
  let box: LiteralBox
}

struct LiteralHoldsAClosure {
  let body: () -> Void
}

enum LiteralDescribing: CustomStringConvertible {
  case plain
  case valued(Int)
  var description: String { "described" }
}

indirect enum LiteralChain {
  case end
  case link(LiteralChain)
}

@Suite("The \"swift\" field: an action written as the Swift that makes it")
struct SwiftLiteralTests {
  @Test("an enum case with its labels in the order of its declaration, not the log's sorted keys")
  func labelsInDeclarationOrder() throws {
    #expect(try SwiftLiteral.action(BasketAction.put(quantity: 2, name: "Milk")) == #".put(quantity: 2, name: "Milk")"#)
    #expect(
      try SwiftLiteral.action(BasketAction.note("semi-skimmed", on: "Milk")) == #".note("semi-skimmed", on: "Milk")"#)
    #expect(try SwiftLiteral.action(BasketAction.empty) == ".empty")
    #expect(try SwiftLiteral.action(LiteralWrapping.many(1, "a", flag: true)) == #".many(1, "a", flag: true)"#)
  }

  @Test("structs by their memberwise initializer, nested enums by their type, collections sorted")
  func structsEnumsCollections() throws {
    let sample = LiteralSample(
      shape: LiteralShape.circle(radius: 2.5), tags: ["b", "a"], sizes: ["m": 2, "l": 3], pair: (x: 1, y: -2),
      maybe: nil)
    #expect(
      try SwiftLiteral.action(LiteralWrapping.sample(sample))
        == #".sample(LiteralSample(shape: LiteralShape.circle(radius: 2.5), tags: ["a", "b"], sizes: ["l": 3, "m": 2], pair: (x: 1, y: -2), maybe: nil))"#
    )
    let restore = BasketAction.restore(items: [BasketItem(name: "Tea", quantity: 3, note: "green")])
    #expect(
      try SwiftLiteral.action(restore) == #".restore(items: [BasketItem(name: "Tea", quantity: 3, note: "green")])"#)
    #expect(
      try SwiftLiteral.action(
        LiteralWrapping.sample(LiteralSample(shape: .point, tags: [], sizes: [:], pair: (0, 0), maybe: 4)))
        == ".sample(LiteralSample(shape: LiteralShape.point, tags: [], sizes: [:], pair: (x: 0, y: 0), maybe: 4))")
  }

  @Test("strings as literals: quotes, backslashes and line breaks escaped, invisible characters by their code")
  func strings() {
    let text = "a\"b\\c\nd\t\0e\u{202E}f\u{200D}g😀é\r"
    #expect(SwiftLiteral.string(text) == #""a\"b\\c\nd\t\0e\u{202E}f\u{200D}g😀é\r""#)
    #expect("a\"b\\c\nd\t\0e\u{202E}f\u{200D}g😀é\r" == text)
  }

  @Test("numbers as literals, the ones without a literal by name; Foundation values by their initializers")
  func numbersAndFoundation() throws {
    #expect(
      try SwiftLiteral.action([Double.infinity, -.infinity, .nan, 0.1, 1e20, -0.0])
        == "[.infinity, -.infinity, .nan, 0.1, 1e+20, -0.0]")
    #expect(try SwiftLiteral.action([Int.min]) == "[-9223372036854775808]")
    #expect(try SwiftLiteral.action([UInt64.max]) == "[18446744073709551615]")
    let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    let date = Date(timeIntervalSince1970: 1_795_000_000.125)
    let url = URL(string: "https://example.com/a?b=c")!
    let data = Data([0, 1, 2, 255])
    #expect(
      try SwiftLiteral.action([id]) == #"[UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]"#)
    #expect(try SwiftLiteral.action([date]) == "[Date(timeIntervalSince1970: 1795000000.125)]")
    #expect(Date(timeIntervalSince1970: 1795000000.125) == date)
    #expect(try SwiftLiteral.action([url]) == #"[URL(string: "https://example.com/a?b=c")!]"#)
    #expect(try SwiftLiteral.action([data]) == #"[Data(base64Encoded: "AAEC/w==")!]"#)
    #expect(Data(base64Encoded: "AAEC/w==")! == data)
  }

  @Test("what has no literal is refused, with the reason")
  func refusals() {
    func reason(_ value: Any) -> String? {
      let written = Result { () throws(SwiftLiteral.Refusal) in try SwiftLiteral.action(value) }
      guard case .failure(let refusal) = written else { return nil }
      return refusal.reason
    }
    #expect(reason(LiteralHoldsABox(box: LiteralBox()))?.contains("is a class") == true)
    #expect(reason(LiteralHoldsAClosure(body: {})) != nil)
    #expect(reason(LiteralDescribing.plain)?.contains("describes itself") == true)
    #expect(reason(LiteralDescribing.valued(1)) == nil)
    struct Local { let value: Int }
    #expect(reason(Local(value: 1))?.contains("declared in a function") == true)
    #expect(reason([1...3])?.contains("has no literal") == true)
    var chain = LiteralChain.end
    for _ in 0..<200 { chain = .link(chain) }
    #expect(reason(chain)?.contains("deep") == true)
  }

  @Test("a log with .swift writes the action, the state type with its module, and how the state was taken")
  func fieldsOnTheLine() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .swift)
    let store = Store<BasketState>(
      state: .init(owner: "ann"), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoEmptyPuts()), log.middleware(label: "ann", snapshots: .snapshot)])
    let other = Store<BasketState>(
      state: .init(owner: "bob"), mutations: .init(), executor: .immediate,
      middlewares: [log.middleware(label: "bob", snapshots: .encoding { $0.owner })])
    store.actions.dispatch(action: .put(quantity: 2, name: "Milk"))
    store.actions.dispatch(action: .put(quantity: 0, name: "Eggs"))
    other.actions.dispatch(action: .empty)
    log.flush()  // the log's queue writes the lines
    let objects = try lines.all.map {
      try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    #expect(objects[0]["swift"] as? String == #".put(quantity: 2, name: "Milk")"#)
    #expect(objects[0]["stateType"] as? String == "FluxTestingTests.BasketState")
    #expect(objects[0]["stateForm"] as? String == "snapshot")
    #expect(objects[1]["swift"] as? String == #".put(quantity: 0, name: "Eggs")"#)
    #expect(objects[1]["stateForm"] == nil)  // a cancelled line has no state
    #expect(objects[2]["stateForm"] as? String == "encoding")
    withExtendedLifetime((store, other)) {}  // optimized builds free a store after its last use
  }

  @Test("a log without .swift writes none of its fields")
  func noFieldsWithoutTheOption() throws {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: .all)
    let store = Store<BasketState>(
      state: .init(owner: "ann"), mutations: .init(), executor: .immediate,
      middlewares: [log.middleware(label: "ann", snapshots: .snapshot)])
    store.actions.dispatch(action: .put(quantity: 2, name: "Milk"))
    for key in ["swift", "swiftError", "stateType", "stateForm"] {
      log.flush()  // the log's queue writes the lines
      #expect(!lines.text.contains("\"\(key)\""))
    }
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
  }

  @Test("every expression the log writes reads back; anything else is refused")
  func expressionsReadBack() throws {
    for text in [
      #".put(quantity: 2, name: "Milk")"#, ".empty",
      #".restore(items: [BasketItem(name: "T\u{202E}", quantity: -3, note: nil)])"#,
      "[.infinity, -.infinity, .nan, 0.1, 1e+20, -0.0]",
      #"[UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]"#,
      #".sample(LiteralSample(shape: LiteralShape.circle(radius: 2.5), tags: ["a"], sizes: ["l": 3], pair: (x: 1, y: -2)))"#,
      "[:]", "[]", "(1, 2)",
    ] {
      #expect(throws: Never.self, "\(text)") { try SwiftExpression.parse(text) }
    }
    for hostile in [
      #".add(title: "x")); exit(1); _ = (("#, #".add(title: "\(x)")"#, ".add(title: { exit(1) }())", ".add(1).count",
      "exit(1)", "FileManager.default", #"Data(contentsOf: URL(string: "http://example.com")!)"#,
      #"URL(string: "a")"#, "Process()", "NSData()", ".add(1) // comment", ".add(1)\n.add(2)", #".add(title: "a"#,
      ".add(" + String(repeating: "[", count: 500), "1 + 1", "-x", "#if true", "`x`",
    ] {
      #expect(throws: SwiftExpression.Failure.self, "\(hostile)") { try SwiftExpression.parse(hostile) }
    }
  }

  @Test(
    "a standard type's static member or initializer, or a number no Swift integer or finite Double holds, is refused")
  func standardMembersAndUnboundedNumbersRefused() {
    for hostile in [
      ".flag(Bool.random())", "Int.random()", "Int(1)", "Int(Int32.max)", "Double.pi", "UUID.init()", "Date.now",
      "URL.homeDirectory", "Data.init()", "Character.init(\"a\")", "Substring(\"a\")",
      "18446744073709551616", "-9223372036854775809", String(repeating: "9", count: 100_000), "1e99999", "-1e400",
    ] {
      #expect(throws: SwiftExpression.Failure.self, "\(hostile)") { try SwiftExpression.parse(hostile) }
    }
    for bound in ["18446744073709551615", "-9223372036854775808", "1.7976931348623157e+308", "5e-324", "007", "-0.0"] {
      #expect(throws: Never.self, "\(bound)") { try SwiftExpression.parse(bound) }
    }
  }

  @Test(
    "a type's path is of type names only: a static property in it, whose value a method is then called on, is refused")
  func typePathOfTypesOnly() {
    for hostile in ["Item.shared.Reset()", "Outer.current.Inner.make(1)", ".add(Outer.inner.Thing(1))"] {
      #expect(throws: SwiftExpression.Failure.self, "\(hostile)") { try SwiftExpression.parse(hostile) }
    }
    #expect(throws: Never.self) { try SwiftExpression.parse(".add(Outer.Inner.Thing.case(1), Outer.Inner(x: 1))") }
  }

  @Test("a function of a module, an initializer the log does not name, or a forbidden type inside a path is refused")
  func moduleFunctionsAndImplicitInitializersRefused() {
    for hostile in [
      #".put(quantity: Int(Foundation.system("touch /tmp/x")), name: "a")"#, #"Int(Glibc.system("id"))"#,
      "Foundation.exit(1)", #"Swift.print("x")"#, "Swift.Int(1)", #"Foundation.Process()"#,
      #"Foundation.FileManager.default"#, "Outer.Process.make()", #".add(title: .init(repeating: "a", count: 9))"#,
      ".init()", "Item.init(id: 1)", "[Item.self]", "FluxTesting.StoreTester.make()",
    ] {
      #expect(throws: SwiftExpression.Failure.self, "\(hostile)") { try SwiftExpression.parse(hostile) }
    }
  }
}
