import Foundation

/// A Swift Testing file that replays a recorded session through `StoreTester`: a bug report (a
/// session log from a user, a tester, or the Inspector) becomes a regression test.
///
/// ```swift
/// let recording = try Recording(contentsOf: URL(fileURLWithPath: "session.jsonl"))
/// let test = try SessionTest(recording, source: "session.jsonl", name: "SessionTests")
/// try test.text.write(toFile: "Tests/AppTests/SessionTests.swift", atomically: true, encoding: .utf8)
/// ```
///
/// The file has one test per store of the session. Each makes the store as its session began
/// (``SessionTestable/sessionStart(label:)``, the state's `Mutations()`, and each middleware that
/// cancelled one of its actions, by name, made with `init()`), dispatches the store's actions in
/// the order of the log, and asserts what the store committed, what middleware cancelled, and
/// its state after each action against the snapshot the log recorded (``StateChecks``). A
/// failure names the line of the session where the state first differs, with the recorded and
/// the actual state side by side.
///
/// The test compiles against the app's own types, which the log names: so the log must be
/// recorded with ``ActionLog/Fields/swift`` (the actions as Swift, the state type), with
/// ``ActionLog/Fields/cancelledBy`` if a middleware cancelled an action, and each store with
/// `snapshots: .snapshot` (``StateSnapshots/snapshot``). A store whose lines lack one of these is
/// left out, and ``leftOut`` says which, and what to record with; when no store can be tested,
/// the initializer throws them all. Nothing that would not compile is written.
///
/// The file is formatted as `swift format` formats it (at its default width of 100 columns, and
/// so at any wider one), and the same session gives the same file: it holds the session's source
/// and times, not the time it was made.
///
/// - A global dispatch is dispatched to the store under test only: each test replays one store.
/// - A line that the Inspector caused in a live session (`"steered"` on it: a jump, a skip, an
///   action dispatched from the page) is replayed as what it was, the store's restore action or
///   the action from the page, committed or cancelled as the log says, with a comment that says
///   what caused it.
/// - A middleware that held an action is named in a comment; the action's outcome is asserted.
/// - Where actions are missing from the log (its `sequence` jumps, or starts past 1: a live
///   session whose app could not send some lines, a log of a session's last actions), each store
///   takes the state recorded at its next committed line (`StoreTester.restore`), and goes on from
///   there.
///
/// > Important: The test runs what the log holds. The actions are checked as they are read (values
/// > only: literals, enum cases, memberwise initializers; no closure, no method call, no
/// > interpolation), but a log from elsewhere is code from elsewhere: read the test before you
/// > run it.
public struct SessionTest: Sendable {
  /// Which states a test checks.
  public enum StateChecks: Sendable, Equatable {
    /// The state after every action of the store: a failure names the first that differs.
    case afterEveryAction
    /// The state after the store's last action only.
    case finalState
  }

  /// A store of the session that no test could be written for, and why.
  public struct Problem: Sendable, Equatable, CustomStringConvertible {
    /// The store's label.
    public let store: String
    /// The line of the log, counted from 1, where the problem is; `nil` when it is the store's.
    public let line: Int?
    /// What is missing, and how the app must record for a test: the `fields:` or `snapshots:`
    /// to give its log.
    public let message: String

    /// `store, line N: message`.
    public var description: String {
      store + (line.map { ", line \($0)" } ?? "") + ": " + message
    }
  }

  /// The Swift file.
  public let text: String
  /// The labels of the stores the file tests, in the order they first act in the session.
  public let stores: [String]
  /// The stores left out, and why.
  public let leftOut: [Problem]

  /// How the file's first line begins: a tool finds its own files by it, before it replaces one.
  public static let marker = "// Generated from a Flux session"

  /// Writes the test of `recording`.
  ///
  /// - Parameters:
  ///   - recording: The session.
  ///   - source: Where the session comes from, for the file's comment: the log's path, or the
  ///     app of a live session.
  ///   - name: The name of the test suite: a Swift type name, usually the file's, and not the
  ///     name of a type or module the test names (its state type, a middleware, `StoreTester`…),
  ///     which the suite would hide.
  ///   - stateChecks: Which states to check; after every action by default.
  /// - Throws: A ``SessionTestError`` with every problem when no store can be tested (or the name
  ///   is not a type name or hides one the test names, or the log has no action).
  public init(
    _ recording: Recording, source: String, name: String = "SessionTests",
    stateChecks: StateChecks = .afterEveryAction
  ) throws(SessionTestError) {
    guard SwiftLiteral.isIdentifier(name), name.first?.isUppercase == true else {
      throw SessionTestError(
        problems: [], message: "\(name) is not a name for a test suite: a Swift type name, such as SessionTests")
    }
    guard let first = recording.entries.first, let last = recording.entries.last else {
      throw SessionTestError(problems: [], message: "the session has no action to test")
    }
    do {
      try recording.checkSequence()
    } catch {
      throw SessionTestError(problems: [], message: error.description)
    }
    var plans: [StorePlan] = []
    var problems: [Problem] = []
    var labels: [String] = []
    var entries: [String: [Recording.Entry]] = [:]
    var reached: [String: Set<String>] = [:]
    for entry in recording.entries {
      if entries[entry.store] == nil { labels.append(entry.store) }
      entries[entry.store, default: []].append(entry)
      if let dispatch = entry.dispatch { reached[dispatch, default: []].insert(entry.store) }
    }
    let reach = reached.mapValues(\.count)
    let gaps = Self.gaps(in: recording)
    for label in labels {
      switch StorePlan.make(
        label: label, entries: entries[label] ?? [], reach: reach, gaps: gaps, checks: stateChecks)
      {
      case .success(let plan): plans.append(plan)
      case .failure(let list): problems += list.problems
      }
    }
    guard !plans.isEmpty else {
      throw SessionTestError(problems: problems, message: "no store of the session can be tested")
    }
    // The suite's name hides any type of that name in the file: `StoreTester<TodoListState>` in a
    // suite `TodoListState` names the suite.
    var named = Self.namesTheFileUses
    for plan in plans {
      named.insert(plan.module)
      named.insert(String(plan.stateType.prefix { $0 != "." }))
      for middleware in plan.middlewares {
        named.insert(String(middleware.prefix { $0.isLetter || $0.isNumber || $0 == "_" }))
      }
      for step in plan.steps { named.formUnion(step.action.typeNames) }
    }
    guard !named.contains(name) else {
      throw SessionTestError(
        problems: [],
        message:
          "\(name) is not a name for a test suite: the test names a type or a module \(name), which it would hide")
    }
    let session = SessionFile.Session(
      source: source, name: name, from: first.time, to: last.time, actions: recording.entries.count,
      stores: labels.count, cutShortLine: recording.cutShortLine, checks: stateChecks)
    self.text = SessionFile(session: session, plans: plans, leftOut: problems).text
    self.stores = plans.map(\.label)
    self.leftOut = problems
  }
}

extension SessionTest {
  /// The names every test file uses, besides those of the session's types: a suite of one of
  /// these names would hide it, or is not a name a struct can have.
  static let namesTheFileUses: Set<String> = [
    "Self", "Any", "Type", "Protocol", "Swift", "Testing", "Test", "Suite", "FluxTesting", "Foundation", "StoreTester",
    "AnyMiddleware",
  ]

  /// Where the `sequence` of the log's lines jumps, or starts past 1: actions missing from it (a
  /// live session whose app could not send some lines, a log of a session's last actions).
  static func gaps(in recording: Recording) -> [StorePlan.Gap] {
    var gaps: [StorePlan.Gap] = []
    var previous: UInt64?
    for entry in recording.entries {
      guard let sequence = entry.sequence else { continue }
      // Bounded before any arithmetic: the numbers come from the log.
      let expected = previous.map { $0 < UInt64.max ? $0 + 1 : $0 } ?? 1
      if sequence > expected { gaps.append(StorePlan.Gap(line: entry.line, count: sequence - expected)) }
      previous = sequence
    }
    return gaps
  }
}

/// Why no test can be written for a session.
public struct SessionTestError: Error, Sendable, CustomStringConvertible {
  /// Each store that could not be tested, and why.
  public let problems: [SessionTest.Problem]
  /// What went wrong as a whole.
  public let message: String

  /// Creates an error.
  ///
  /// - Parameters:
  ///   - problems: The stores that could not be tested.
  ///   - message: What went wrong as a whole.
  public init(problems: [SessionTest.Problem], message: String) {
    self.problems = problems
    self.message = message
  }

  /// The message, then each problem on a line of its own.
  public var description: String {
    ([message] + problems.map { "  " + $0.description }).joined(separator: "\n")
  }
}
