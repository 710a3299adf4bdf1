#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Bionic)
  import Bionic
#endif

/// A middleware that writes one line per committed action, and one per cancelled action.
///
/// ```swift
/// SharedMiddlewares.add(LoggingMiddleware())
/// store.actions.dispatch(action: .add(3))
/// // CounterAction.add(3) -> CounterState(count: 3)
/// ```
///
/// A committed action reads `Action.case(payload) -> state`, the state described after the
/// commit (make the state `CustomStringConvertible` for a useful description); a cancelled
/// action reads `Action.case(payload) cancelled`. Use it shared, for every store, or give it to
/// one store as `AnyMiddleware(LoggingMiddleware())`.
///
/// > Important: Lines are written on each store's executor, as the actions are committed.
public struct LoggingMiddleware: SharedMiddleware {
  private let output: @Sendable (String) -> Void

  /// Creates a logging middleware that hands each line to `write`.
  ///
  /// - Parameter write: Receives each line, without a line break; standard error by default.
  public init(write: @escaping @Sendable (String) -> Void = LoggingMiddleware.standardError) {
    self.output = write
  }

  /// Writes `line` and a line break to standard error, with as many system calls as it takes.
  public static let standardError: @Sendable (String) -> Void = { line in
    var text = line + "\n"
    text.withUTF8 { bytes in writeAll(bytes) { write(2, $0, $1) } }
  }

  /// Hands `bytes` to `write` until all are written: again after a short write, or after one
  /// that a signal interrupted (`EINTR`); it stops at any other error, where the line is lost
  /// (standard error has nowhere to report it).
  package static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, with write: (UnsafeRawPointer, Int) -> Int) {
    guard var next = bytes.baseAddress.map(UnsafeRawPointer.init) else { return }
    var remaining = bytes.count
    while remaining > 0 {
      let written = write(next, remaining)
      if written > 0 {
        next += written
        remaining -= written
      } else if written < 0 && errno == EINTR {
        continue
      } else {
        return
      }
    }
  }

  /// Writes the committed action and the state it left.
  public func didCommit(action: any Sendable, state: any State) {
    output("\(Self.describe(action)) -> \(state)")
  }

  /// Writes the cancelled action.
  public func didCancel(action: any Sendable, state: any State) {
    output("\(Self.describe(action)) cancelled")
  }

  /// `Action.case(payload)`: the action's type name, then the action.
  static func describe(_ action: any Sendable) -> String {
    "\(type(of: action)).\(action)"
  }
}
