/// The test of one store of a session, read and checked from its lines: what ``SessionFile``
/// writes.
struct StorePlan {
  /// One action of the store.
  struct Step {
    let line: Int
    let action: SwiftExpression
    let outcome: ActionOutcome
    /// The state to compare after it, if the test checks it there.
    let recorded: JSONValue?
    /// What the comment above it says, sentence by sentence.
    let notes: [String]
    /// Whether the store takes the recorded state here rather than the action: actions before
    /// it are not in the log.
    var isRestore = false
  }

  /// Where actions are missing from a log: before `line`, `count` of them (its `sequence`
  /// jumps; or starts past 1, as a log of a session's last actions does).
  struct Gap {
    let line: Int
    let count: UInt64
  }

  let label: String
  /// The state type as the test names it: `TodoListState`.
  let stateType: String
  /// The module to import for it.
  let module: String
  /// The middleware to make the store with, by name, in the order they first cancelled.
  let middlewares: [String]
  let steps: [Step]

  /// The problems of a store that no test can be written for.
  struct Problems: Error {
    let problems: [SessionTest.Problem]
  }

  /// At most this many problems of one store are listed; the rest are counted.
  static let problemLimit = 5

  /// The plan for the store labelled `label`, or everything that keeps it from being tested.
  ///
  /// `entries`: the store's lines, in order; `reach`: how many stores each global dispatch of the
  /// session reached; `gaps`: where actions are missing from the log, in order.
  static func make(
    label: String, entries: [Recording.Entry], reach: [String: Int], gaps: [Gap], checks: SessionTest.StateChecks
  ) -> Result<StorePlan, Problems> {
    var problems: [SessionTest.Problem] = []
    func problem(_ line: Int?, _ message: String) {
      problems.append(SessionTest.Problem(store: label, line: line, message: message))
    }
    let record = "record with `ActionLog(output: …, fields: [.all, .swift])`"

    // The state type, the same on every line.
    let types = Set(entries.compactMap(\.stateType))
    var typeName: (name: String, module: String)?
    if let missing = entries.first(where: { $0.stateType == nil }) {
      problem(missing.line, "the log does not name the store's state type, nor write its actions as Swift: " + record)
    } else if types.count > 1 {
      problem(
        nil,
        "two state types under one label (\(types.sorted().joined(separator: ", "))): give each store a label of its own"
      )
    } else if let type = types.first {
      if let name = SwiftLiteral.swiftName(type), !type.contains("<"), let module = SwiftLiteral.module(ofName: type) {
        if let refusal = SwiftExpression.refusal(ofType: name) {
          problem(nil, "its state type, \(type), is not made from a log (\(refusal))")
        } else {
          typeName = (name, module)
        }
      } else {
        problem(
          nil, "its state type, \(type), cannot be named in a test (it is generic, private, or declared in a function)")
      }
    }

    // The last committed line, for a check of the final state only.
    let lastCommitted = entries.last { $0.outcome == .committed }?.line
    var middlewares: [String] = []
    var steps: [Step] = []
    var nextGap = 0
    // Actions missing before the store's next committed line: it takes the state recorded there.
    var missing: UInt64 = 0
    for entry in entries {
      while nextGap < gaps.count && gaps[nextGap].line <= entry.line {
        missing = missing &+ gaps[nextGap].count
        nextGap += 1
      }
      // Cancelled while actions are missing: what middleware decided depends on the state then.
      if missing > 0 && entry.outcome == .cancelled { continue }
      let isRestore = missing > 0
      var notes: [String] = []
      let action: SwiftExpression?
      if let swift = entry.swift {
        do {
          action = try SwiftExpression.parse(swift)
        } catch {
          action = nil
          problem(entry.line, "its \"swift\" is not a value a test may make (\(error.message))")
        }
      } else {
        action = nil
        if let reason = entry.swiftError {
          problem(entry.line, "the action cannot be written as Swift: \(reason)")
        } else if entry.stateType != nil {
          problem(entry.line, "the line does not write its action as Swift: " + record)
        }
      }

      var recorded: JSONValue?
      if entry.outcome == .committed, checks == .afterEveryAction || entry.line == lastCommitted || isRestore {
        let snapshot =
          "record the store with `log.middleware(label: \(SwiftLiteral.string(label)), snapshots: .snapshot)`"
        if !entry.hasState, entry.hasStateMirror {
          problem(
            entry.line,
            "its state is a Mirror snapshot (`snapshots: .mirror`), which a test cannot compare or take: " + snapshot
              + " (of a state that is Snapshotting)")
        } else if !entry.hasState {
          problem(entry.line, "the line has no state: " + snapshot)
        } else if entry.stateType == nil {
          // Without the fields of `.swift`, the form of the state is not known either: said above.
        } else if entry.stateForm != SnapshotForm.snapshot.rawValue {
          problem(
            entry.line,
            "its state was taken by a function of the app's, which a test cannot take again: " + snapshot
              + " (of a state that is Snapshotting)")
        } else {
          do {
            recorded = try entry.state(as: JSONValue.self)
          } catch {
            problem(entry.line, "its state cannot be read: \(error.message)")
          }
        }
      }

      if entry.outcome == .cancelled {
        if let middleware = entry.cancelledBy {
          if let refusal = refusal(ofMiddleware: middleware) {
            problem(entry.line, "it was cancelled by \(middleware), which a test does not make (\(refusal))")
          } else if isTypeName(middleware) {
            if !middlewares.contains(middleware) { middlewares.append(middleware) }
            notes.append("Cancelled by \(middleware).")
          } else {
            problem(entry.line, "it was cancelled by \(middleware), which a test cannot name")
          }
        } else {
          problem(
            entry.line,
            "it was cancelled, and the log does not say by which middleware: record with `fields: .all` (or "
              + "`.cancelledBy`)")
        }
      }
      let holds = entry.holds.filter { isTypeName($0.middleware) }
      if !holds.isEmpty {
        notes.append(
          "Held by " + holds.map { "\($0.middleware) for \(duration($0.nanoseconds))" }.joined(separator: ", then by ")
            + ".")
      }
      if let dispatch = entry.dispatch {
        let reached = reach[dispatch] ?? 1
        notes.append("A global dispatch, which reached \(reached == 1 ? "1 store" : "\(reached) stores").")
      }
      if let steered = entry.steered {
        notes.append("Steered from the Inspector (\(SwiftLiteral.isIdentifier(steered) ? steered : "a command")).")
      }
      if isRestore {
        let count = missing == 1 ? "1 action" : "\(missing) actions"
        notes = ["\(count) of the session before this one are not in the log: the store takes the state recorded here."]
        missing = 0
      }
      if let action {
        steps.append(
          Step(
            line: entry.line, action: action, outcome: entry.outcome, recorded: recorded, notes: notes,
            isRestore: isRestore))
      }
    }

    guard problems.isEmpty, let typeName else {
      let shown = Array(problems.prefix(problemLimit))
      let more = problems.count - shown.count
      let tail = more > 0 ? [SessionTest.Problem(store: label, line: nil, message: "and \(more) more like these")] : []
      return .failure(Problems(problems: shown + tail))
    }
    return .success(
      StorePlan(label: label, stateType: typeName.name, module: typeName.module, middlewares: middlewares, steps: steps)
    )
  }

  /// Whether `name` is a type a test can name as the log wrote it: `Name`, `Outer.Name`,
  /// `Name<Argument, Other>`.
  static func isTypeName(_ name: String) -> Bool {
    var rest = Substring(name)
    return typeName(&rest, depth: 0) && rest.isEmpty
  }

  /// Why the test may not make the middleware `name` (`Name`, `Outer.Name<Argument>`), which it
  /// makes with `init()`: a part of it, or of a generic argument, is refused as a type a log names
  /// (``SwiftExpression/refusal(ofType:)``).
  static func refusal(ofMiddleware name: String) -> String? {
    let types = name.split { $0 == "<" || $0 == ">" || $0 == "," || $0 == " " }
    return types.lazy.compactMap { SwiftExpression.refusal(ofType: String($0)) }.first
  }

  private static func typeName(_ rest: inout Substring, depth: Int) -> Bool {
    guard depth < 8 else { return false }
    while true {
      let part = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
      guard SwiftLiteral.isIdentifier(String(part)) else { return false }
      rest = rest.dropFirst(part.count)
      guard rest.first == "." else { break }
      rest = rest.dropFirst()
    }
    guard rest.first == "<" else { return true }
    rest = rest.dropFirst()
    while true {
      if rest.first == " " { rest = rest.dropFirst() }
      guard typeName(&rest, depth: depth + 1) else { return false }
      guard rest.first == "," else { break }
      rest = rest.dropFirst()
    }
    guard rest.first == ">" else { return false }
    rest = rest.dropFirst()
    return true
  }

  /// `1.2 ms`, `850 µs`: how long a middleware held an action.
  static func duration(_ nanoseconds: UInt64) -> String {
    guard nanoseconds >= 1_000_000 else { return "\(nanoseconds / 1000) µs" }
    let tenths = nanoseconds / 100_000
    return "\(tenths / 10).\(tenths % 10) ms"
  }
}
