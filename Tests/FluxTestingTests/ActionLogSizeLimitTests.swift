import FluxCore
import FluxDevtools
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A log that reaches the process's file-size limit (`ulimit -f`, `prlimit --fsize`) on a thread
/// that takes signals, as an app's main thread does: the system sends `SIGXFSZ`, which ends the
/// process unless the signal is blocked, ignored or handled.
@Suite("An action log past the file-size limit")
struct ActionLogSizeLimitTests {
  /// Set for the child process: the path of the log it writes.
  private static let childVariable = "FLUX_TEST_LOG_PAST_SIZE_LIMIT"
  private static let limit = 4096

  @Test(
    "rule 17: a line past the file-size limit, written on a thread that takes signals, is reported and the process goes on"
  )
  func inv17_linePastTheSizeLimitIsReportedAndTheProcessGoesOn() throws {
    if let path = ProcessInfo.processInfo.environment[Self.childVariable] {
      try Self.writePastTheLimit(at: URL(fileURLWithPath: path))
      return
    }
    #if os(Linux)
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-fsize-\(UUID())")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      let log = folder.appendingPathComponent("big.jsonl")
      let output = folder.appendingPathComponent("child.txt")
      let status = try Self.runChild(
        [CommandLine.arguments[0], "--testing-library", "swift-testing", "--filter", "ActionLogSizeLimitTests"],
        environment: [Self.childVariable: log.path, "SWIFT_BACKTRACE": "enable=no"], output: output)
      let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
      // Not ended by a signal (SIGXFSZ), and its own expectations held.
      #expect(status & 0x7f == 0, "the child ended by signal \(status & 0x7f): \(said)")
      #expect((status >> 8) & 0xff == 0, "the child failed: \(said)")
      #expect(said.contains("reported: cannot write \(log.path): the file would pass the largest size"))
      // Every line that is in the file is whole.
      let text = try String(contentsOf: log, encoding: .utf8)
      #expect(!text.isEmpty && text.hasSuffix("\n") && text.utf8.count <= Self.limit)
      #expect(try Recording(jsonLines: text).entries.count == text.split(separator: "\n").count)
    #endif
  }

  /// In the child: writes past the limit on a thread that takes `SIGXFSZ`, and checks the
  /// failure is reported.
  private static func writePastTheLimit(at url: URL) throws {
    #if os(Linux)
      // Set here, not by `prlimit` for the whole child: a sanitizer's runtime maps files as it
      // starts, and a limit that small would stop it.
      var limit = rlimit()
      getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
      limit.rlim_cur = rlim_t(Self.limit)
      try #require(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0)
    #endif
    let reported = ReportedFailures()
    let output = try ActionLogOutput.file(url) { reported.add($0) }
    let done = DispatchSemaphore(value: 0)
    let writer = Thread {
      #if os(Linux)
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGXFSZ)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
      #endif
      for number in 0..<400 {
        output.write(
          #"{"action":\#(number),"outcome":"committed","store":"s","time":"2026-11-27T13:00:00.000Z"}"# + "\n")
      }
      done.signal()
    }
    writer.start()
    done.wait()
    let failures = reported.all
    #expect(failures.count == 1)
    if let failure = failures.first { print("reported: \(failure)") }
    #expect(throws: ActionLogOutput.FileError.self) { try output.finish() }
  }

  #if os(Linux)
    /// Runs `arguments` with `environment` added, its output and errors to `output`; its wait status.
    private static func runChild(_ arguments: [String], environment: [String: String], output: URL) throws -> Int32 {
      let argv = arguments.map { strdup($0) } + [nil]
      var variables = ProcessInfo.processInfo.environment
      variables.merge(environment) { _, new in new }
      let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
      defer {
        for argument in argv { free(argument) }
        for variable in envp { free(variable) }
      }
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
      var pid = pid_t()
      let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
      try #require(spawned == 0, "cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 {
        try #require(errno == EINTR, "cannot wait for \(arguments[0])")
      }
      return status
    }
  #endif
}

/// The failures an output reported, from any thread.
private final class ReportedFailures: @unchecked Sendable {
  // `@unchecked Sendable`: `failures` is read and written only under `lock`.
  private let lock = NSLock()
  private var failures: [ActionLogOutput.FileError] = []

  func add(_ failure: ActionLogOutput.FileError) { lock.withLock { failures.append(failure) } }
  var all: [ActionLogOutput.FileError] { lock.withLock { failures } }
}
