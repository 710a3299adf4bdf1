import FluxCore
import FluxTesting
import Foundation
import Testing

@testable import FluxDevtools

@Suite("SessionTest: a recorded session becomes a test")
struct SessionTestTests {
  /// A session of two baskets, written as a log with every field does: a cancel, a hold, a global
  /// dispatch that reached both, and a jump from the Inspector.
  static let session = """
    {"action":{"put":{"name":"Milk","quantity":2}},"durationNanoseconds":1200,"outcome":"committed","sequence":1,"state":[{"name":"Milk","quantity":2}],"stateForm":"snapshot","stateType":"FluxTestingTests.BasketState","store":"basket:ann","swift":".put(quantity: 2, name: \\"Milk\\")","time":"2026-11-23T03:07:49.123Z"}
    {"action":{"put":{"name":"Eggs","quantity":0}},"cancelledBy":"NoEmptyPuts","outcome":"cancelled","sequence":2,"stateType":"FluxTestingTests.BasketState","store":"basket:ann","swift":".put(quantity: 0, name: \\"Eggs\\")","time":"2026-11-23T03:07:50.001Z"}
    {"action":{"note":{"_0":"semi-skimmed","on":"Milk"}},"durationNanoseconds":900,"holds":[{"middleware":"Confirmation","nanoseconds":2500000}],"outcome":"committed","sequence":3,"state":[{"name":"Milk","note":"semi-skimmed","quantity":2}],"stateForm":"snapshot","stateType":"FluxTestingTests.BasketState","store":"basket:ann","swift":".note(\\"semi-skimmed\\", on: \\"Milk\\")","time":"2026-11-23T03:07:51.500Z"}
    {"action":{"empty":{}},"dispatch":"7","durationNanoseconds":800,"outcome":"committed","sequence":4,"state":[],"stateForm":"snapshot","stateType":"FluxTestingTests.BasketState","store":"basket:bob","swift":".empty","time":"2026-11-23T03:07:52.000Z"}
    {"action":{"empty":{}},"dispatch":"7","durationNanoseconds":700,"outcome":"committed","sequence":5,"state":[],"stateForm":"snapshot","stateType":"FluxTestingTests.BasketState","store":"basket:ann","swift":".empty","time":"2026-11-23T03:07:52.001Z"}
    {"action":{"restore":{"items":[{"name":"Tea","quantity":3}]}},"durationNanoseconds":600,"outcome":"committed","sequence":6,"state":[{"name":"Tea","quantity":3}],"stateForm":"snapshot","stateType":"FluxTestingTests.BasketState","steered":"jump","store":"basket:bob","swift":".restore(items: [BasketItem(name: \\"Tea\\", quantity: 3, note: nil)])","time":"2026-11-23T03:07:53.250Z"}

    """

  static let expected = #"""
    // Generated from a Flux session: regenerate this file rather than edit it.
    // Source: session.jsonl.
    // Recorded from 2026-11-23T03:07:49.123Z to 2026-11-23T03:07:53.250Z: 6 actions of 2 stores.
    // Each test makes one store as its session began (SessionTestable), dispatches its actions in the
    // order of the log, and checks what the store committed, what middleware cancelled, and its state
    // after each action against the state the log recorded there.
    // The test runs what the log holds: read it as code from wherever the log came from.

    import FluxTesting
    import Testing

    @testable import FluxTestingTests

    @Suite("The session of session.jsonl")
    struct BasketSessionTests {
      @Test("basket:ann")
      func basketAnn() async {
        let tester = StoreTester<BasketState>(
          session: "basket:ann", mutations: .init(), middlewares: [AnyMiddleware(NoEmptyPuts())])
        await tester.dispatch(
          .put(quantity: 2, name: "Milk"), sessionLine: 1,
          recorded: #"[{"name": "Milk", "quantity": 2}]"#)
        // Cancelled by NoEmptyPuts.
        await tester.dispatch(
          .put(quantity: 0, name: "Eggs"), committed: [], cancelled: [.put(quantity: 0, name: "Eggs")],
          sessionLine: 2)
        // Held by Confirmation for 2.5 ms.
        await tester.dispatch(
          .note("semi-skimmed", on: "Milk"), sessionLine: 3,
          recorded: #"[{"name": "Milk", "note": "semi-skimmed", "quantity": 2}]"#)
        // A global dispatch, which reached 2 stores.
        await tester.dispatch(.empty, sessionLine: 5, recorded: #"[]"#)
        tester.finish()
      }

      @Test("basket:bob")
      func basketBob() async {
        let tester = StoreTester<BasketState>(session: "basket:bob", mutations: .init())
        // A global dispatch, which reached 2 stores.
        await tester.dispatch(.empty, sessionLine: 4, recorded: #"[]"#)
        // Steered from the Inspector (jump).
        await tester.dispatch(
          .restore(items: [BasketItem(name: "Tea", quantity: 3, note: nil)]), sessionLine: 6,
          recorded: #"[{"name": "Tea", "quantity": 3}]"#)
        tester.finish()
      }
    }

    """#

  @Test("a session becomes one test per store: its actions in order, cancels, holds, global dispatches, steering")
  func wholeFile() throws {
    let test = try SessionTest(
      Recording(jsonLines: Self.session), source: "session.jsonl", name: "BasketSessionTests")
    #expect(test.text == Self.expected)
    #expect(test.stores == ["basket:ann", "basket:bob"])
    #expect(test.leftOut.isEmpty)
  }

  @Test("the same session gives the same file")
  func deterministic() throws {
    let recording = try Recording(jsonLines: Self.session)
    let first = try SessionTest(recording, source: "session.jsonl").text
    let second = try SessionTest(try Recording(jsonLines: Self.session), source: "session.jsonl").text
    #expect(first == second)
  }

  @Test("--final-state-only: each store's state is checked after its last committed action only")
  func finalStateOnly() throws {
    let test = try SessionTest(
      Recording(jsonLines: Self.session), source: "session.jsonl", stateChecks: .finalState)
    #expect(test.text.components(separatedBy: "recorded:").count - 1 == 2)
    #expect(test.text.contains("await tester.dispatch(.empty, sessionLine: 5, recorded: #\"[]\"#)"))
    #expect(test.text.contains("sessionLine: 1)"))
    #expect(test.text.contains("after its last action"))
  }

  // MARK: Format

  /// A session whose actions and states do not fit on a line: a restore of many items, long
  /// strings, characters that do not show, and a raw string's delimiters inside a state.
  static func longSession() throws -> Recording {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: [.all, .swift])
    let store = Store<BasketState>(
      state: .init(owner: "a long label"), mutations: .init(), executor: .immediate,
      middlewares: [
        AnyMiddleware(NoEmptyPuts()), log.middleware(label: "a basket with a rather long label", snapshots: .snapshot),
      ])
    let items = (1...14).map {
      BasketItem(name: "Item number \($0)", quantity: $0, note: $0 % 3 == 0 ? "note \($0)" : nil)
    }
    store.actions.dispatch(action: .restore(items: items))
    store.actions.dispatch(action: .put(quantity: 1, name: String(repeating: "very long name ", count: 9)))
    store.actions.dispatch(
      action: .note("a \"quoted\" #note\"# with \\#(no interpolation) and \u{202E}", on: "Item number 2"))
    store.actions.dispatch(action: .put(quantity: 0, name: String(repeating: "cancelled ", count: 12)))
    store.actions.dispatch(action: .take(name: "Item number 1"))
    withExtendedLifetime(store) {}  // optimized builds free a store after its last use
    log.flush()  // the log's queue writes the lines
    return try Recording(jsonLines: lines.text)
  }

  /// What `swift format format` makes of `text`, with the configuration at `configuration`, or
  /// its default one.
  static func formatted(_ text: String, configuration: String?) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("session-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("SessionTests.swift")
    try text.write(to: file, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments =
      ["swift", "format", "format"] + (configuration.map { ["--configuration", $0] } ?? []) + [file.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "swift format failed on the file")
    return String(decoding: data, as: UTF8.self)
  }

  /// The project's `.swift-format`, found from this file up.
  static var projectConfiguration: String {
    var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while folder.path != "/" {
      let candidate = folder.appendingPathComponent(".swift-format")
      if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
      folder.deleteLastPathComponent()
    }
    return ".swift-format"
  }

  @Test("the file is as swift format leaves it, at its default width and at the project's")
  func formattedAsSwiftFormatWould() throws {
    for recording in [try Recording(jsonLines: Self.session), try Self.longSession(), try Self.gapSession()] {
      for checks in [SessionTest.StateChecks.afterEveryAction, .finalState] {
        let text = try SessionTest(recording, source: "session.jsonl", stateChecks: checks).text
        #expect(try Self.formatted(text, configuration: nil) == text)
        #expect(try Self.formatted(text, configuration: Self.projectConfiguration) == text)
        // Longer only where a string literal is longer than a line.
        let long = text.split(separator: "\n").filter { $0.count > 100 }
        #expect(long.allSatisfy { $0.contains("very long name") || $0.contains("cancelled cancelled") })
      }
    }
  }

  // MARK: What a log lacks

  /// A log of `ann` with `fields` and ann's snapshots, and of `bob` with `bobSnapshots`.
  static func record(
    fields: ActionLog.Fields, bobSnapshots: StateSnapshots<BasketState>?
  ) throws -> Recording {
    let lines = Lines()
    let log = ActionLog(output: lines.output, fields: fields)
    let ann = Store<BasketState>(
      state: .init(owner: "ann"), mutations: .init(), executor: .immediate,
      middlewares: [AnyMiddleware(NoEmptyPuts()), log.middleware(label: "ann", snapshots: .snapshot)])
    let bobLog = bobSnapshots.map { log.middleware(label: "bob", snapshots: $0) } ?? log.middleware(label: "bob")
    let bob = Store<BasketState>(
      state: .init(owner: "bob"), mutations: .init(), executor: .immediate, middlewares: [bobLog])
    ann.actions.dispatch(action: .put(quantity: 2, name: "Milk"))
    ann.actions.dispatch(action: .put(quantity: 0, name: "Eggs"))
    bob.actions.dispatch(action: .put(quantity: 1, name: "Tea"))
    withExtendedLifetime((ann, bob)) {}  // optimized builds free a store after its last use
    log.flush()  // the log's queue writes the lines
    return try Recording(jsonLines: lines.text)
  }

  @Test("a log recorded without .swift gives no test, and says which fields to record with")
  func withoutSwiftField() throws {
    let error = #expect(throws: SessionTestError.self) {
      try SessionTest(Self.record(fields: .all, bobSnapshots: .snapshot), source: "s.jsonl")
    }
    #expect(error?.message == "no store of the session can be tested")
    #expect(error?.problems.map(\.store) == ["ann", "bob"])
    #expect(error?.problems.allSatisfy { $0.message.contains("fields: [.all, .swift]") } == true)
    #expect(error?.description.split(separator: "\n").count == 3)
  }

  @Test("a store without snapshots is left out, the others tested; the file and the problem say how to record it")
  func storeWithoutSnapshots() throws {
    let test = try SessionTest(Self.record(fields: [.all, .swift], bobSnapshots: nil), source: "s.jsonl")
    #expect(test.stores == ["ann"])
    #expect(test.leftOut.map(\.store) == ["bob"])
    #expect(test.leftOut.first?.line == 3)
    #expect(test.leftOut.first?.message.contains(#"log.middleware(label: "bob", snapshots: .snapshot)"#) == true)
    #expect(test.text.contains("// Left out: bob, line 3: the line has no state"))
    #expect(!test.text.contains("func bob()"))
  }

  @Test(
    "states a function of the app's took cannot be taken again: the store is left out, and told to record .snapshot")
  func encodedSnapshots() throws {
    let test = try SessionTest(
      Self.record(fields: [.all, .swift], bobSnapshots: .encoding { $0.owner }), source: "s.jsonl")
    #expect(test.leftOut.first?.message.contains("taken by a function of the app's") == true)
    #expect(test.leftOut.first?.message.contains("snapshots: .snapshot") == true)
  }

  @Test("a cancel the log does not say the middleware of is left out, with the field to record")
  func cancelWithoutMiddleware() throws {
    let test = try SessionTest(Self.record(fields: .swift, bobSnapshots: .snapshot), source: "s.jsonl")
    #expect(test.stores == ["bob"])
    #expect(test.leftOut.first?.line == 2)
    #expect(test.leftOut.first?.message.contains(".cancelledBy") == true)
  }

  /// A line of store `s`, with `swift` and `swiftError` as given.
  static func line(swift: String?, swiftError: String? = nil, stateType: String = "FluxTestingTests.BasketState")
    -> String
  {
    var object: [String: Any] = [
      "action": ["empty": [:] as [String: Any]], "durationNanoseconds": 1, "outcome": "committed", "state": [] as [Any],
      "stateForm": "snapshot", "stateType": stateType, "store": "s", "time": "2026-11-23T03:07:49.123Z",
    ]
    object["swift"] = swift
    object["swiftError"] = swiftError
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  @Test("an action that could not be written as Swift, or whose Swift is more than a value, is refused, with why")
  func actionsNotWritable() throws {
    for (line, expected) in [
      (Self.line(swift: nil, swiftError: "a Box is a class: an object has no literal"), "a Box is a class"),
      (Self.line(swift: ".empty); exit(1); _ = ((1"), "is not a value a test may make"),
      (Self.line(swift: #".put(quantity: 1, name: "\(secret)")"#), "is not a value a test may make"),
      (Self.line(swift: nil), "does not write its action as Swift"),
      (Self.line(swift: ".empty", stateType: "FluxTestingTests.Box<Swift.Int>"), "cannot be named in a test"),
      (
        Self.line(swift: ".empty", stateType: "FluxTestingTests.(unknown context at $1).S"), "cannot be named in a test"
      ),
    ] {
      let error = #expect(throws: SessionTestError.self) {
        try SessionTest(Recording(jsonLines: line), source: "s.jsonl")
      }
      #expect(error?.problems.first?.message.contains(expected) == true, "\(line)")
    }
  }

  @Test("a module's function, a forbidden state type or middleware from the log gives no test of the store")
  func modulesAndForbiddenTypesRefused() throws {
    let cancelled = Self.line(swift: ".empty").replacingOccurrences(
      of: #""outcome":"committed""#, with: #""outcome":"cancelled""#)
    for (line, expected) in [
      (Self.line(swift: #".put(quantity: Int(Foundation.system("touch /tmp/x")), name: "a")"#), "names the module"),
      (Self.line(swift: #".put(quantity: 1, name: .init(repeating: "a", count: 9))"#), "is not a case a log writes"),
      (Self.line(swift: ".empty", stateType: "Foundation.FileManager"), "is not made from a log"),
      (Self.line(swift: ".empty", stateType: "App.Outer.Process"), "is not made from a log"),
      (
        cancelled.replacingOccurrences(of: "{\"action", with: #"{"cancelledBy":"Foundation.Process","action"#),
        "does not make"
      ),
      (
        cancelled.replacingOccurrences(of: "{\"action", with: #"{"cancelledBy":"Box<URLSession>","action"#),
        "does not make"
      ),
    ] {
      let error = #expect(throws: SessionTestError.self, "\(line)") {
        try SessionTest(Recording(jsonLines: line), source: "s.jsonl")
      }
      #expect(error?.problems.first?.message.contains(expected) == true, "\(line): \(String(describing: error))")
    }
  }

  @Test("a file from a log of hostile text parses as Swift, with no declaration but the suite and its tests")
  func hostileTextParses() throws {
    let texts = [
      "\"); exit(1); _ = (\"", "\\(exit(1))", "\"\"\"\nexit(1)\n\"\"\"", "\"#)\nexit(1)//", "*/ exit(1) /*",
      "// x\nfunc f() {}", "a\u{2028}exit(1)\u{2029}b", "\u{202E}\u{2066}x\u{2069}", "nul\u{0}x", "\r\nfunc g() {}",
      "#if true\nexit(1)\n#endif", "@main struct M {}", String(repeating: "\\", count: 301),
    ]
    var lines = ""
    for (index, text) in texts.enumerated() {
      let swift = ".put(quantity: \(index), name: " + SwiftLiteral.string(text) + ")"
      lines += Self.line(swift: swift).replacingOccurrences(of: #""store":"s""#, with: #""store":"s\#(index)\u2028}""#)
    }
    let test = try SessionTest(Recording(jsonLines: lines), source: "log */\n}\u{2028}func y() {}\u{0}")
    #expect(test.stores.count == texts.count)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("session-parse-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("SessionTests.swift")
    try test.text.write(to: file, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["swiftc", "-parse", file.path]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "swiftc -parse failed on:\n\(test.text)")
    let declarations = test.text.split(separator: "\n").filter {
      let code = $0.drop { $0 == " " }
      return ["func ", "struct ", "#", "@main", "exit("].contains { code.hasPrefix($0) }
    }
    #expect(declarations.count == texts.count + 1, "\(declarations)")
  }

  @Test("text from the log in a comment or a name cannot end it: every line break and invisible character escaped")
  func commentsAndNamesHoldTheirText() throws {
    let label = "a\n}\nfunc x() { exit(1) }\u{202E}"
    let line = Self.line(swift: ".empty").replacingOccurrences(
      of: #""store":"s""#, with: #""store":"a\n}\nfunc x() { exit(1) }\u202e""#)
    let test = try SessionTest(Recording(jsonLines: line), source: "log\n}\nfunc y() {}")
    #expect(test.stores == [label])
    #expect(test.text.contains(#"// Source: log\n}\nfunc y() {}."#))
    #expect(test.text.contains(#"@Test("a\n}\nfunc x() { exit(1) }\u{202E}")"#))
    #expect(test.text.contains("func aFuncXExit1() async {"))
    #expect(!test.text.contains("\nfunc x()"))
    #expect(!test.text.contains("\nfunc y()"))
  }

  @Test("a name that is not a type name, an empty session, or lines out of their order give no test")
  func wholeSessionRefused() throws {
    let recording = try Recording(jsonLines: Self.session)
    #expect(throws: SessionTestError.self) { try SessionTest(recording, source: "s", name: "session tests") }
    #expect(throws: SessionTestError.self) { try SessionTest(recording, source: "s", name: "sessionTests") }
    #expect(throws: SessionTestError.self) { try SessionTest(Recording(jsonLines: ""), source: "s") }
    let reordered = Self.session.split(separator: "\n").reversed().joined(separator: "\n")
    let error = #expect(throws: SessionTestError.self) { try SessionTest(Recording(jsonLines: reordered), source: "s") }
    #expect(error?.message.contains("out of the order") == true)
  }

  @Test(
    "a suite name the file would read as another type (its state, a middleware, a value's type, Self) gives no test")
  func suiteNameThatShadowsRefused() throws {
    let recording = try Recording(jsonLines: Self.session)
    for name in [
      "Self", "Any", "Testing", "StoreTester", "AnyMiddleware", "BasketState", "BasketItem", "NoEmptyPuts",
      "Foundation",
    ] {
      let error = #expect(throws: SessionTestError.self, "\(name)") {
        try SessionTest(recording, source: "s", name: name)
      }
      #expect(error?.message.contains("\(name) is not a name for a test suite") == true, "\(name)")
    }
    #expect(throws: Never.self) { try SessionTest(recording, source: "s", name: "BasketStateTests") }
  }

  @Test("a last line cut short is left out, and the file says so")
  func cutShortLastLine() throws {
    let text = Self.session.trimmingCharacters(in: .newlines) + "\n{\"action\":{\"put\":{\"na"
    let test = try SessionTest(Recording(jsonLines: text, allowingCutShortLastLine: true), source: "s")
    #expect(test.text.contains("// Its line 7 was cut short and is left out."))
  }

  /// A live session as the Inspector receives it: a file's lines, plus `"steered"` on each commit
  /// (or cancel) that a command of the Inspector caused.
  static let liveSession: String = {
    let lines: [(swift: String, state: String?, steered: String?)] = [
      (".put(quantity: 2, name: \\\"Milk\\\")", #"[{"name":"Milk","quantity":2}]"#, nil),
      (".restore(items: [])", "[]", "jump"),
      (".put(quantity: 1, name: \\\"Tea\\\")", #"[{"name":"Tea","quantity":1}]"#, nil),
      (
        ".restore(items: [BasketItem(name: \\\"Milk\\\", quantity: 2, note: nil)])", #"[{"name":"Milk","quantity":2}]"#,
        "skip"
      ),
      (".restore(items: [])", "[]", "unskip"),
      (".restore(items: [])", "[]", "present"),
      (".put(quantity: 0, name: \\\"Eggs\\\")", nil, "dispatch"),
      (".take(name: \\\"Milk\\\")", "[]", "dispatch"),
      (".restore(items: [])", "[]", "import"),
      (".empty", "[]", "a\\n}\\u202e"),
    ]
    return lines.enumerated().map { index, line in
      let (swift, state, steered) = line
      let outcome =
        state.map { #""durationNanoseconds":500,"outcome":"committed","state":\#($0),"stateForm":"snapshot""# }
        ?? #""cancelledBy":"NoEmptyPuts","outcome":"cancelled""#
      let steering = steered.map { #","steered":"\#($0)""# } ?? ""
      return #"{"action":{"empty":{}},"# + outcome + #","sequence":\#(index + 1),"#
        + #""stateType":"FluxTestingTests.BasketState""# + steering + #","store":"basket","swift":"\#(swift)","#
        + #""time":"2026-11-23T03:07:49.123Z"}"# + "\n"
    }.joined()
  }()

  @Test("a live session: each commit or cancel the Inspector caused is dispatched as what it was, with what caused it")
  func liveSessionSteeredLines() throws {
    let test = try SessionTest(Recording(jsonLines: Self.liveSession), source: "live")
    #expect(test.leftOut.isEmpty)
    #expect(test.stores == ["basket"])
    // Every line is dispatched, the steered ones too, in the order of the log.
    let lines = (1...10).map { "sessionLine: \($0)" }
    let found = lines.compactMap { test.text.range(of: $0)?.lowerBound }
    #expect(found.count == 10)
    #expect(found == found.sorted())
    for kind in ["jump", "skip", "unskip", "present", "import"] {
      #expect(test.text.contains("// Steered from the Inspector (\(kind)).\n"), "\(kind)")
    }
    #expect(test.text.components(separatedBy: "// Steered from the Inspector (dispatch).\n").count == 3)
    // A steered value that is not a word is not copied into the file.
    #expect(test.text.contains("// Steered from the Inspector (a command).\n"))
    #expect(!test.text.contains("\u{202E}") && !test.text.contains("(a\n") && !test.text.contains(#"(a\n"#))
    // The action dispatched from the page that a middleware cancelled is asserted cancelled.
    #expect(
      test.text.contains(
        """
            // Cancelled by NoEmptyPuts.
            // Steered from the Inspector (dispatch).
            await tester.dispatch(
              .put(quantity: 0, name: "Eggs"), committed: [], cancelled: [.put(quantity: 0, name: "Eggs")],
              sessionLine: 7)
        """))
    #expect(test.text.contains("middlewares: [AnyMiddleware(NoEmptyPuts())]"))
    #expect(test.text.contains(##"await tester.dispatch(.restore(items: []), sessionLine: 9, recorded: #"[]"#)"##))
  }

  /// A session whose `sequence` starts at 7 and jumps from 8 to 12: two stores, a cancel after the
  /// jump.
  static func gapSession() throws -> Recording {
    func line(_ sequence: Int, _ store: String, _ swift: String, _ state: String?) -> String {
      let outcome = state == nil ? #""cancelledBy":"NoEmptyPuts","outcome":"cancelled""# : #""outcome":"committed""#
      let body = state.map { #","state":\#($0),"stateForm":"snapshot""# } ?? ""
      return #"{"action":{"empty":{}},"# + outcome + #","sequence":\#(sequence)"# + body
        + #","stateType":"FluxTestingTests.BasketState","store":"\#(store)","swift":"\#(swift)","#
        + #""time":"2026-11-23T03:07:49.123Z"}"# + "\n"
    }
    return try Recording(
      jsonLines:
        line(7, "a", ".empty", "[]") + line(8, "b", ".empty", "[]")
        + line(12, "a", ".put(quantity: 0, name: \\\"x\\\")", nil)
        + line(13, "a", ".empty", #"[{"name":"Tea","quantity":1}]"#) + line(14, "b", ".empty", "[]"))
  }

  @Test("actions missing from the log (its sequence jumps, or starts past 1): each store takes the state recorded next")
  func gapsInTheSequence() throws {
    let test = try SessionTest(Self.gapSession(), source: "s")
    #expect(test.leftOut.isEmpty)
    #expect(test.text.contains("// 6 actions of the session before this one are not in the log: the store takes the"))
    #expect(test.text.contains("await tester.restore(sessionLine: 1, recorded: #\"[]\"#)"))
    #expect(test.text.contains("await tester.restore(sessionLine: 2, recorded: #\"[]\"#)"))
    // Store a: the cancelled line after the gap is left out, the committed one restored.
    #expect(!test.text.contains("sessionLine: 3"))
    #expect(test.text.contains("// 3 actions of the session before this one are not in the log"))
    #expect(
      test.text.contains(##"await tester.restore(sessionLine: 4, recorded: #"[{"name": "Tea", "quantity": 1}]"#)"##))
    #expect(test.text.contains("await tester.restore(sessionLine: 5, recorded: #\"[]\"#)"))
  }
}
