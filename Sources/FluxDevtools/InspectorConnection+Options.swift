import Foundation

extension InspectorConnection {
  /// How an ``InspectorConnection`` behaves: its buffer, its log's fields, the protocol's times,
  /// and where it says what goes wrong.
  ///
  /// ```swift
  /// var options = InspectorConnection.Options()
  /// options.bufferLines = 50_000
  /// let inspector = InspectorConnection(host: "127.0.0.1", port: 9400, options: options)
  /// ```
  public struct Options: Sendable {
    /// The most lines the buffer holds, sent or not: 10,000 by default. Lines sent stay, while
    /// there is room, for an inspector that reconnects without them, and for steering, which
    /// works from them.
    public var bufferLines = 10_000
    /// The most bytes of lines the buffer holds: 8 MiB by default. A line longer than this, or
    /// than a message may be (16 MiB), is not sent: it is counted in a gap.
    public var bufferBytes = 8 << 20
    /// The optional fields of the log's lines: all by default, as the inspector shows them.
    public var fields: ActionLog.Fields = .all
    /// How long an attempt to connect may take, in seconds: 5 by default.
    public var connectTimeout = 5.0
    /// How long the inspector may take to answer the hello, in seconds: 10 by default.
    public var handshakeTimeout = 10.0
    /// After how long without sending anything the app pings, in seconds: 5 by default.
    public var pingInterval = 5.0
    /// After how long without a word from the inspector the connection is taken for dead (a
    /// half-open connection) and made again, in seconds: 15 by default.
    public var silenceLimit = 15.0
    /// The first wait before reconnecting, in seconds, doubled after each attempt that fails in
    /// a row up to ``maximumBackoff``; each wait is shortened by up to half, at random: 0.1 s. A
    /// connection that ends within ``maximumBackoff`` of its welcome counts as an attempt that
    /// failed.
    public var initialBackoff = 0.1
    /// The longest wait before reconnecting, in seconds: 5 by default.
    public var maximumBackoff = 5.0
    /// How long a command waits for its store to commit before its answer says the store is busy,
    /// in seconds: 10 by default (the inspector waits 15).
    public var commitTimeout = 10.0
    /// Where the connection says what went wrong (the inspector cannot be reached, refused the app,
    /// sent what the protocol does not allow): a line on standard error by default. Each message
    /// is said once, not at every attempt.
    public var report: @Sendable (String) -> Void = { message in
      FileHandle.standardError.write(Data((message + "\n").utf8))
    }
    /// Called after each command of the inspector, with what it did; on the connection's task,
    /// after the store committed. `nil` by default.
    public var onCommand: (@Sendable (Command) -> Void)?

    /// The defaults.
    public init() {}
  }

  /// Where an ``InspectorConnection`` is.
  public enum Phase: Sendable, Equatable {
    /// Opening a connection to the inspector.
    case connecting
    /// Connected; the app said hello and waits for the welcome.
    case handshaking
    /// Welcomed: lines go out, commands come in.
    case connected
    /// The last attempt or connection ended; waiting before the next.
    case backingOff
    /// Closed by the app, for good.
    case closed
  }

  /// What an ``InspectorConnection`` has done so far.
  public struct Statistics: Sendable, Equatable {
    /// The lines the log wrote to the connection.
    public let linesWritten: Int
    /// The lines sent to an inspector (a line sent again after a reconnect counts again).
    public let linesSent: Int
    /// The lines not kept, and never sent: the buffer was full of lines not yet sent, or a line
    /// was too long.
    public let linesNotKept: Int
    /// The lines written while the inspector had paused the session: not sent, but counted in a
    /// gap.
    public let linesWrittenWhilePaused: Int
    /// How many times an inspector welcomed the app.
    public let connections: Int
    /// How many times an inspector refused it.
    public let refusals: Int
  }

  /// A command of the inspector, done: what the app answered.
  public struct Command: Sendable, Equatable {
    /// `jump`, `present`, `skip`, `unskip`, `dispatch`, `pause`, `resume` or `import`; what the
    /// inspector sent for another.
    public let name: String
    /// The label of the store it named, if it named one.
    public let store: String?
    /// Whether it was done.
    public let succeeded: Bool
    /// What it did ("jumped lists to after #12"), or why it was not done.
    public let outcome: String
  }
}
