/// The life of a live connection to the inspector, as a value: its phase, and what each thing
/// that happens makes of it. ``LiveEngine`` keeps one on its thread and does what it says; the
/// phase that others read (``InspectorConnection/phase``) is a copy it publishes under its lock.
///
/// ```
/// connecting ──opened──▶ handshaking ──welcomed──▶ connected
///     ▲                       │                        │
///     └─backoffElapsed── backingOff ◀──────ended───────┘  (and from connecting, handshaking)
/// any phase ──close──▶ closed (for good)
/// ```
struct ConnectionMachine {
  typealias Phase = InspectorConnection.Phase

  /// What a message of a given type is, in the phase it comes in.
  enum Verdict: Equatable {
    /// To be handled.
    case handle
    /// Ignored: a message of a newer protocol (`x-…`), or a `pong`.
    case ignore
    /// Wrong here: the connection ends, with this said to the inspector.
    case wrong(String)
  }

  private(set) var phase: Phase = .connecting
  /// Attempts that ended in a row without a connection that lasted: the backoff doubles with each.
  private(set) var failures = 0
  /// When the connection now open was welcomed, if it was.
  private var welcomedAt: UInt64?
  /// The first backoff, and the longest, in seconds.
  let initialBackoff: Double
  let maximumBackoff: Double

  init(initialBackoff: Double, maximumBackoff: Double) {
    self.initialBackoff = max(0.001, initialBackoff)
    self.maximumBackoff = max(self.initialBackoff, maximumBackoff)
  }

  /// The socket is open: the hello goes out.
  mutating func opened() {
    guard phase == .connecting else { return }
    phase = .handshaking
  }

  /// The inspector welcomed the app at `now` (monotonic nanoseconds). The backoff starts again
  /// from its first step once the connection has lasted ``maximumBackoff``: an inspector that
  /// welcomes and hangs up at once is backed off from as one that refuses, not reconnected to (and
  /// sent the whole buffer again) ten times a second.
  mutating func welcomed(at now: UInt64) {
    guard phase == .handshaking else { return }
    phase = .connected
    welcomedAt = now
  }

  /// The attempt or the connection ended (the inspector refused, closed, went silent, or could
  /// not be reached). Returns how long to wait before the next attempt, in seconds: the backoff
  /// doubles from ``initialBackoff`` to ``maximumBackoff`` with each ending in a row, and
  /// `random` (from 0 to 1) takes up to half of it off, so that apps that lost one inspector do
  /// not all come back at once. A connection that was welcomed and lasted ``maximumBackoff``
  /// (until `now`, monotonic nanoseconds) waits the first step.
  mutating func ended(random: Double, at now: UInt64) -> Double {
    guard phase != .closed else { return 0 }
    phase = .backingOff
    if let welcomedAt, now >= welcomedAt, Double(now - welcomedAt) >= maximumBackoff * 1e9 { failures = 0 }
    welcomedAt = nil
    failures = min(failures + 1, 64)
    var delay = initialBackoff
    for _ in 1..<failures where delay < maximumBackoff { delay *= 2 }
    delay = min(delay, maximumBackoff)
    return delay * (1 - 0.5 * min(max(random, 0), 1))
  }

  /// The wait is over: the next attempt begins.
  mutating func backoffElapsed() {
    guard phase == .backingOff else { return }
    phase = .connecting
  }

  /// The app closed the connection: nothing more is attempted.
  mutating func close() {
    phase = .closed
  }

  /// What a message of `type` from the inspector is now.
  func verdict(on type: String) -> Verdict {
    if type.hasPrefix("x-") || type == "pong" { return .ignore }
    switch (phase, type) {
    case (.handshaking, "welcome"), (.handshaking, "refused"), (_, "error"): return .handle
    case (.connected, "command"), (.connected, "ping"), (.connected, "refused"): return .handle
    case (.handshaking, "command"), (.handshaking, "ping"):
      return .wrong("a \(type) came before the welcome")
    case (.connected, "welcome"): return .wrong("a second welcome")
    default: return .wrong("a message of an unknown type: \(type.prefix(64))")
    }
  }
}
