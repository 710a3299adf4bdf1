import Dispatch
import FluxCore
import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What flight recorders do when the process ends: at a normal exit (`atexit`) every live
/// recorder writes its lines; on a fatal signal (SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS,
/// SIGFPE) each recorder with a file appends one line, prepared without encoding, that says how
/// many actions it held.
///
/// The fatal signals are handled in a signal handler, where encoding is not safe: it uses
/// `write(2)` on descriptors opened beforehand and a fixed buffer, then puts back the handler it
/// found (the Swift runtime's backtracer, or the default) and raises the signal again.
enum FatalSignals {
  static let fatal: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

  /// The actions found before, by signal number.
  nonisolated(unsafe) static let previous: UnsafeMutablePointer<sigaction> = {
    let table = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    table.initialize(repeating: sigaction(), count: 65)
    return table
  }()
  /// The crash line is built here: no allocation in the handler.
  nonisolated(unsafe) static let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)

  /// Installs the handlers, once.
  static func install() {
    _ = installed
  }

  private static let installed: Void = {
    _ = CrashSlots.table
    _ = previous
    for signal in fatal {
      var action = sigaction()
      #if canImport(Darwin)
        action.__sigaction_u.__sa_handler = fatalSignalHandler
      #else
        action.__sigaction_handler.sa_handler = fatalSignalHandler
      #endif
      sigemptyset(&action.sa_mask)
      action.sa_flags = 0
      sigaction(signal, &action, previous + Int(signal))
    }
  }()
}

/// Appends the crash line to the file of every flight recorder; then puts back the action found
/// before and raises the signal again, which that action gets once this returns.
private func fatalSignalHandler(_ signal: Int32) {
  for index in 0..<CrashSlots.capacity {
    let entry = CrashSlots.table[index]
    guard entry.descriptor >= 0 else { continue }
    var length = 0
    func append(_ text: StaticString) {
      text.withUTF8Buffer { bytes in
        for byte in bytes where length < 256 {
          FatalSignals.buffer[length] = byte
          length += 1
        }
      }
    }
    func append(_ number: Int) {
      var digits:
        (
          UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
          UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
        ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
      var value = number < 0 ? 0 : number
      var count = 0
      withUnsafeMutableBytes(of: &digits) { digits in
        repeat {
          digits[count] = UInt8(ascii: "0") + UInt8(value % 10)
          value /= 10
          count += 1
        } while value > 0 && count < 20
        while count > 0 && length < 256 {
          count -= 1
          FatalSignals.buffer[length] = digits[count]
          length += 1
        }
      }
    }
    append(#"{"error":"the process stopped on signal "#)
    append(Int(signal))
    append(": the flight recorder held ")
    append(entry.held)
    append(#" actions, not written","flightRecorderLost":"#)
    append(entry.held)
    append(#","signal":"#)
    append(Int(signal))
    append("}\n")
    _ = write(entry.descriptor, FatalSignals.buffer, length)
  }
  sigaction(signal, FatalSignals.previous + Int(signal), nil)
  raise(signal)
}

/// The live logs in flight-recorder mode, for the exit.
enum FlightRecorders {
  private final class Weak: @unchecked Sendable {
    // Set once, at init.
    weak var log: ActionLog?
    init(_ log: ActionLog) { self.log = log }
  }

  private static let lock = Lock()
  nonisolated(unsafe) private static var logs: [Weak] = []

  static func add(_ log: ActionLog) {
    _ = atExit
    FatalSignals.install()
    lock.withLock {
      logs.removeAll { $0.log == nil }
      logs.append(Weak(log))
    }
  }

  private static let atExit: Void = {
    atexit { FlightRecorders.writeAll() }
  }()

  /// Every live recorder writes its lines, and waits for them.
  static func writeAll() {
    let live = lock.withLock { logs.compactMap(\.log) }
    for log in live { log.writeFlightRecord() }
  }
}
