/// One step of a model program, run at top level or by an observer while it receives a value.
enum ModelStep: Hashable, CustomStringConvertible {
  /// Adds observer `id` (a new id each time; a repeated one does nothing).
  case observe(Int)
  /// Disposes observer `id`; does nothing if it was never added.
  case dispose(Int)
  /// Sends a value into the sink, or sets the variable to it.
  case send(Int)
  /// Sets the variable to a value through `modify(_:)`.
  case modify(Int)
  /// Reads the variable's value.
  case read

  var description: String {
    switch self {
    case .observe(let id): "observe(#\(id))"
    case .dispose(let id): "dispose(#\(id))"
    case .send(let value): "send(\(value))"
    case .modify(let value): "modify(\(value))"
    case .read: "read"
    }
  }
}

/// What an observer does when it receives one value.
struct ModelTrigger: Hashable, Comparable {
  let observer: Int
  let value: Int

  static func < (lhs: ModelTrigger, rhs: ModelTrigger) -> Bool {
    (lhs.observer, lhs.value) < (rhs.observer, rhs.value)
  }
}

/// A random program of observe, dispose and send steps on one sink or variable, with the steps
/// that observers run from inside a delivery.
///
/// Every sent value is distinct, and every observe step adds a new observer id, so each
/// reaction runs at most once and a program always ends.
struct ModelProgram: CustomStringConvertible {
  enum Subject: String {
    case sink, variable
  }

  /// What observers may do from inside a delivery.
  struct Reactions: OptionSet {
    let rawValue: Int
    static let send = Reactions(rawValue: 1)
    static let observe = Reactions(rawValue: 2)
    static let dispose = Reactions(rawValue: 4)
    static let read = Reactions(rawValue: 8)
  }

  let seed: UInt64
  let subject: Subject
  /// The variable's initial value (values sent later start at 1).
  let initial = 0
  let steps: [ModelStep]
  let reactions: [ModelTrigger: [ModelStep]]

  var description: String {
    var lines = ["FLUX_MODEL_SEED=\(seed), \(subject), steps: \(steps)"]
    for trigger in reactions.keys.sorted() {
      lines.append("  #\(trigger.observer) on \(trigger.value): \(reactions[trigger]!)")
    }
    return lines.joined(separator: "\n")
  }

  init(seed: UInt64, subject: Subject, reactions allowed: Reactions) {
    var generator = ModelProgramGenerator(seed: seed, subject: subject, allowed: allowed)
    self.seed = seed
    self.subject = subject
    self.steps = generator.topLevelSteps()
    self.reactions = generator.reactions
  }
}

/// Builds a ``ModelProgram`` from a seed.
private struct ModelProgramGenerator {
  let subject: ModelProgram.Subject
  let allowed: ModelProgram.Reactions
  var random: SplitMix64
  var reactions: [ModelTrigger: [ModelStep]] = [:]
  var nextObserver = 0
  var sentValues = [0]  // the variable's initial value counts as sent

  static let maximumDepth = 3

  init(seed: UInt64, subject: ModelProgram.Subject, allowed: ModelProgram.Reactions) {
    self.subject = subject
    self.allowed = allowed
    self.random = SplitMix64(seed: seed)
  }

  mutating func topLevelSteps() -> [ModelStep] {
    var steps: [ModelStep] = []
    for _ in 0..<Int.random(in: 4...18, using: &random) {
      switch Int.random(in: 0..<10, using: &random) {
      case 0..<3: steps.append(observe(depth: 0))
      case 3..<5 where nextObserver > 0: steps.append(.dispose(Int.random(in: 0..<nextObserver, using: &random)))
      case 5 where subject == .variable: steps.append(.read)
      case 6 where subject == .variable: steps.append(.modify(send(depth: 0)))
      default: steps.append(.send(send(depth: 0)))
      }
    }
    return steps
  }

  /// A new observer id; on a variable, perhaps with a reaction to a value it may be replayed.
  private mutating func observe(depth: Int) -> ModelStep {
    let id = nextObserver
    nextObserver += 1
    if subject == .variable, random.chance(1, in: 2) {
      let recent = sentValues.suffix(3)
      let value = recent[recent.startIndex + Int.random(in: 0..<recent.count, using: &random)]
      addReaction(observer: id, value: value, depth: depth + 1)
    }
    return .observe(id)
  }

  /// A new value, with reactions of some observers to it.
  private mutating func send(depth: Int) -> Int {
    let value = sentValues.count
    sentValues.append(value)
    guard !allowed.isEmpty, depth < Self.maximumDepth, nextObserver > 0 else { return value }
    for _ in 0..<Int.random(in: 0...2, using: &random) {
      addReaction(observer: Int.random(in: 0..<nextObserver, using: &random), value: value, depth: depth + 1)
    }
    return value
  }

  private mutating func addReaction(observer: Int, value: Int, depth: Int) {
    let trigger = ModelTrigger(observer: observer, value: value)
    guard reactions[trigger] == nil, depth <= Self.maximumDepth else { return }
    reactions[trigger] = []
    var steps: [ModelStep] = []
    for _ in 0..<Int.random(in: 1...3, using: &random) {
      if let step = reactionStep(observer: observer, depth: depth) { steps.append(step) }
    }
    reactions[trigger] = steps
  }

  private mutating func reactionStep(observer: Int, depth: Int) -> ModelStep? {
    switch Int.random(in: 0..<10, using: &random) {
    case 0..<2 where allowed.contains(.observe):
      return observe(depth: depth)
    case 2 where allowed.contains(.dispose):
      return .dispose(observer)
    case 3 where allowed.contains(.dispose):
      return .dispose(Int.random(in: 0..<nextObserver, using: &random))
    case 4 where allowed.contains(.read) && subject == .variable:
      return .read
    case 5 where allowed.contains(.send) && subject == .variable:
      return .modify(send(depth: depth))
    case _ where allowed.contains(.send):
      return .send(send(depth: depth))
    default:
      return nil
    }
  }
}
