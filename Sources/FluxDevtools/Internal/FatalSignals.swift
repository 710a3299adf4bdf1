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

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

/// What flight recorders do when the process ends: at a normal exit (`atexit`) every live
/// recorder writes its lines; on a fatal signal (SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS,
/// SIGFPE) each recorder with a file appends one line, prepared without encoding, that says how
/// many actions it held.
///
/// The fatal signals are handled in a signal handler, where encoding is not safe: it uses
/// `write(2)` on descriptors opened beforehand and a fixed buffer, then puts back the handler it
/// found (the Swift runtime's backtracer, or the default) and raises the signal again.
///
/// Once per process: the first thread that crashes writes the lines (``CrashOnce``); a thread
/// that crashes meanwhile waits for it, then raises its own signal, so that two crashes at once
/// write each line once, whole. Each line is built from one load of its recorder's count, so a
/// thread that commits while the handler runs changes the next line, never this one.
enum FatalSignals {
  static let fatal: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

  /// The actions found before, by signal number.
  nonisolated(unsafe) static let previous: UnsafeMutablePointer<sigaction> = {
    let table = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    table.initialize(repeating: sigaction(), count: 65)
    return table
  }()
  /// The crash line is built here: no allocation in the handler. Only the thread that holds
  /// ``CrashOnce`` writes it.
  nonisolated(unsafe) static let buffer = UnsafeMutablePointer<UInt8>.allocate(
    capacity: CrashLine.capacity)

  /// Installs the handlers, once.
  static func install() {
    _ = installed
  }

  private static let installed: Void = {
    _ = CrashSlots.table
    CrashOnce.prepare()
    _ = previous
    _ = buffer
    for signal in fatal {
      var action = sigaction()
      #if canImport(Darwin)
        action.__sigaction_u.__sa_handler = fatalSignalHandler
      #else
        action.__sigaction_handler.sa_handler = fatalSignalHandler
      #endif
      sigemptyset(&action.sa_mask)
      // On the alternate stack of a thread that has one (a stack overflow leaves no room on
      // the thread's own stack); on the thread's stack otherwise.
      action.sa_flags = Int32(SA_ONSTACK)
      sigaction(signal, &action, previous + Int(signal))
    }
  }()
}

/// Appends the crash line to the file of every flight recorder, once per process; then puts back
/// the action found before and raises the signal again, which that action gets once this returns.
private func fatalSignalHandler(_ signal: Int32) {
  if CrashOnce.claim() {
    for index in 0..<CrashSlots.capacity {
      let descriptor = CrashSlots.descriptor(at: index)
      guard descriptor >= 0 else { continue }
      // One load: the line says one number twice, and the same number.
      let held = CrashSlots.held(at: index)
      var line = CrashLine(FatalSignals.buffer)
      line.append(#"{"error":"the process stopped on signal "#)
      line.append(Int(signal))
      line.append(": the flight recorder held ")
      line.append(held)
      line.append(#" actions, not written","flightRecorderLost":"#)
      line.append(held)
      line.append(#","signal":"#)
      line.append(Int(signal))
      line.append("}\n")
      line.put(to: descriptor)
    }
    CrashOnce.finish()
  } else {
    CrashOnce.waitForTheFirst()
  }
  sigaction(signal, FatalSignals.previous + Int(signal), nil)
  raise(signal)
}

/// A line built in a fixed buffer, with no allocation and no lock: for a signal handler.
struct CrashLine {
  static let capacity = 256
  let buffer: UnsafeMutablePointer<UInt8>
  private(set) var length = 0

  init(_ buffer: UnsafeMutablePointer<UInt8>) {
    self.buffer = buffer
  }

  mutating func append(_ text: StaticString) {
    let bytes = text.utf8Start
    for offset in 0..<text.utf8CodeUnitCount where length < Self.capacity {
      buffer[length] = bytes[offset]
      length += 1
    }
  }

  /// `number` in decimal; a negative number as 0.
  mutating func append(_ number: Int) {
    var value = UInt(max(number, 0))
    var divisor: UInt = 1
    while value / divisor >= 10 { divisor *= 10 }
    while divisor > 0 && length < Self.capacity {
      buffer[length] = UInt8(ascii: "0") + UInt8(value / divisor)
      value %= divisor
      divisor /= 10
      length += 1
    }
  }

  /// Writes the line with `write(2)`, again after an interruption or a short write, until it is
  /// all written; if a write fails, cuts off the start of the line it wrote (`ftruncate(2)`, as
  /// the log does), so that the file never ends in half a line of the handler's.
  func put(to descriptor: Int32) {
    var written = 0
    while written < length {
      let count = write(descriptor, buffer + written, length - written)
      if count > 0 {
        written += count
      } else if count < 0 && errno == EINTR {
        continue
      } else {
        var status = stat()
        if written > 0 && fstat(descriptor, &status) == 0 && Int(status.st_size) >= written {
          _ = ftruncate(descriptor, status.st_size - off_t(written))
        }
        return
      }
    }
  }
}

/// The crash lines are written once per process, by the first thread whose fatal signal reaches
/// the handler: 0, no crash yet → 1, a thread writes the lines → 2, written.
enum CrashOnce {
  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    private static let state = Atomic<Int>(0)

    /// Whether the calling thread is the first, which writes the lines.
    static func claim() -> Bool {
      state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
    }

    /// The lines are written.
    static func finish() {
      state.store(2, ordering: .releasing)
    }

    private static var isFinished: Bool {
      state.load(ordering: .acquiring) == 2
    }
  #else
    /// On the Apple path, whose minimums predate `Atomic`: a mutex that only the handler takes,
    /// with `trylock`, and never gives back; no thread holds it when a signal comes but one
    /// already in the handler.
    nonisolated(unsafe) private static let first: UnsafeMutablePointer<pthread_mutex_t> = {
      let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
      mutex.initialize(to: pthread_mutex_t())
      pthread_mutex_init(mutex, nil)
      return mutex
    }()
    private static let finished = CrashWords(count: 1, initial: { _ in 0 })

    static func claim() -> Bool {
      pthread_mutex_trylock(first) == 0
    }

    static func finish() {
      finished.store(1, at: 0)
    }

    private static var isFinished: Bool {
      finished.load(0) == 1
    }
  #endif

  /// Makes what the handler uses before a signal comes: nothing is made in the handler.
  static func prepare() {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      _ = isFinished
    #else
      _ = first
      _ = finished
    #endif
  }

  /// Waits until the first thread has written the lines, or about two seconds: a crash in the
  /// handler itself, on the thread that writes, waits for no one forever.
  static func waitForTheFirst() {
    var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
    var waited = 0
    while !isFinished && waited < 2000 {
      nanosleep(&pause, nil)
      waited += 1
    }
  }
}

/// Words that a signal handler reads while other threads write them: atomics where
/// `Synchronization` is there (Linux); on the Apple path, whose minimums predate `Atomic`,
/// aligned machine words, which the processor loads and stores whole.
// `@unchecked Sendable`: every word is an atomic (on the Apple path, an aligned word loaded and
// stored whole), allocated once, never freed; a slot's two words are stored under
// `CrashSlots`'s lock or the recorder's.
final class CrashWords: @unchecked Sendable {
  #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
    private let words: UnsafeMutablePointer<Atomic<Int>>

    init(count: Int, initial: (Int) -> Int) {
      words = .allocate(capacity: count)
      for index in 0..<count { (words + index).initialize(to: Atomic(initial(index))) }
    }

    func load(_ index: Int) -> Int {
      words[index].load(ordering: .acquiring)
    }

    func store(_ value: Int, at index: Int) {
      words[index].store(value, ordering: .releasing)
    }
  #else
    private let words: UnsafeMutablePointer<Int>

    init(count: Int, initial: (Int) -> Int) {
      words = .allocate(capacity: count)
      for index in 0..<count { (words + index).initialize(to: initial(index)) }
    }

    func load(_ index: Int) -> Int {
      words[index]
    }

    func store(_ value: Int, at index: Int) {
      words[index] = value
    }
  #endif
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
