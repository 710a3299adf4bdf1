import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What a run of the `todo` program did.
struct TodoRun {
  let status: Int32
  /// Whether a signal ended it (`status` is then the signal).
  let wasSignalled: Bool
  let output: String
  let errors: String

  /// Both outputs.
  var text: String { output + errors }
}

/// Runs the `todo` program, and makes faults for it: a small disk, a folder where a file should
/// be, another user who cannot read a file.
enum Faults {
  /// The `todo` program the tests run: `TODO_BINARY` when set (to run the tests against another
  /// build), else the one built beside the tests.
  static let todo: URL = {
    if let path = ProcessInfo.processInfo.environment["TODO_BINARY"] { return URL(fileURLWithPath: path) }
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<5 {
      let candidate = folder.appendingPathComponent("todo")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      folder = folder.deletingLastPathComponent()
    }
    return URL(fileURLWithPath: "todo")
  }()

  static var isRoot: Bool { getuid() == 0 }

  /// A prefix that runs the program as nobody, for whom a file of mode 000 cannot be read (root
  /// reads any file, whatever its permission bits).
  static let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

  /// Whether the Linux tools and files the faults use are here: `prlimit`, `setpriv`, `/proc/sys`.
  static var isLinux: Bool {
    #if os(Linux)
      true
    #else
      print("skipped: the fault needs Linux (prlimit, setpriv, tmpfs, /proc/sys)")
      return false
    #endif
  }

  /// Runs `todo` with `arguments` in `folder`, `input` on its standard input, through `prefix`
  /// (a program that runs the rest, like `prlimit`) when given.
  static func run(
    _ arguments: [String], input: String = "", in folder: URL, environment: [String: String] = [:],
    through prefix: [String] = []
  ) throws -> TodoRun {
    let scratch = try temporaryFolder("todo-run")
    defer { try? FileManager.default.removeItem(at: scratch) }
    let inputFile = scratch.appendingPathComponent("input")
    try Data(input.utf8).write(to: inputFile)
    // Pipes, not files, for what it prints: a file-size limit given to it would cut a file short.
    let output = Pipe()
    let errors = Pipe()
    let process = Process()
    let command = prefix + [todo.path] + arguments
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    process.currentDirectoryURL = folder
    // Under the address sanitizer, the program's leak check at `exit` would change its exit
    // status; the leak checks of Flux run in the test process.
    process.environment = ProcessInfo.processInfo.environment.merging(["ASAN_OPTIONS": "detect_leaks=0"]) { $1 }
      .merging(environment) { $1 }
    process.standardInput = try FileHandle(forReadingFrom: inputFile)
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let printed = Printed()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      printed.set(errors: errors.fileHandleForReading.readDataToEndOfFile())
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return TodoRun(
      status: process.terminationStatus, wasSignalled: process.terminationReason == .uncaughtSignal,
      output: String(decoding: outputData, as: UTF8.self), errors: String(decoding: printed.errors, as: UTF8.self))
  }

  /// A new, empty folder of its own.
  static func temporaryFolder(_ name: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  /// Runs `body` with a folder on a `tmpfs` of `bytes`, unmounted and removed when `body`
  /// returns or throws; with `readOnly`, the folder is made read-only after `prepare` ran. Returns
  /// `nil` without running `body` when the process is not root, the only case it may not run.
  static func withSmallDisk<Result>(
    bytes: Int, readOnly: Bool = false, prepare: (URL) throws -> Void = { _ in },
    _ body: (URL) throws -> Result
  ) throws -> Result? {
    guard isRoot else {
      print("skipped: mounting a tmpfs needs root")
      return nil
    }
    #if os(Linux)
      return try withTmpfs(bytes: bytes, readOnly: readOnly, prepare: prepare, body)
    #else
      print("skipped: a tmpfs is mounted on Linux only")
      return nil
    #endif
  }

  #if os(Linux)
    private static func withTmpfs<Result>(
      bytes: Int, readOnly: Bool, prepare: (URL) throws -> Void, _ body: (URL) throws -> Result
    ) throws -> Result? {
      let folder = try temporaryFolder("small-disk")
      defer { try? FileManager.default.removeItem(at: folder) }
      guard mount("tmpfs", folder.path, "tmpfs", 0, "size=\(bytes),mode=0777") == 0 else {
        throw FaultError("cannot mount a tmpfs on \(folder.path): \(String(cString: strerror(errno)))")
      }
      defer { umount2(folder.path, Int32(MNT_DETACH)) }
      try prepare(folder)
      if readOnly {
        let flags = UInt(MS_REMOUNT) | UInt(MS_RDONLY)
        guard mount("tmpfs", folder.path, "tmpfs", flags, nil) == 0 else {
          throw FaultError("cannot make \(folder.path) read-only: \(String(cString: strerror(errno)))")
        }
      }
      return try body(folder)
    }
  #endif

  /// The bytes of the file at `url`, or `nil` if there is none.
  static func contents(_ url: URL) -> Data? {
    FileManager.default.contents(atPath: url.path)
  }

  /// The files of `folder` whose names start with `prefix`.
  static func files(in folder: URL, startingWith prefix: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix(prefix) }.sorted()
  }
}

/// What a child wrote to standard error, read on another thread.
private final class Printed: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var data = Data()

  func set(errors: Data) { lock.withLock { data = errors } }
  var errors: Data { lock.withLock { data } }
}

struct FaultError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}
