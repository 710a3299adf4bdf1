import FluxDevtools
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A log turned into a Swift Testing file (``SessionTest``): what `--swift-test FILE` writes, and
/// what the page's "Export as test" downloads.
///
/// ```swift
/// let leftOut = try SessionTestExport.write(logPath: "session.jsonl", to: "Tests/AppTests/SessionTests.swift")
/// ```
public enum SessionTestExport {
  /// The name of the file the page downloads, and of its suite.
  public static let downloadName = "SessionTests.swift"

  /// The test file of the log at `logPath`, whose suite is named `name`, and the stores it
  /// leaves out. A last line cut short (the app was killed while writing it) is left out too.
  ///
  /// - Parameters:
  ///   - logPath: The session's log.
  ///   - name: The suite's name: a Swift type name.
  ///   - stateChecks: Which states the tests check.
  /// - Throws: An ``InspectorError`` when the log cannot be read, or no store of it can be
  ///   tested: each store and why, on a line of its own.
  public static func test(
    logPath: String, name: String = "SessionTests", stateChecks: SessionTest.StateChecks = .afterEveryAction
  ) throws(InspectorError) -> SessionTest {
    let recording: Recording
    do {
      recording = try Recording(contentsOf: URL(fileURLWithPath: logPath), allowingCutShortLastLine: true)
    } catch {
      throw InspectorError(error.line == nil ? error.message : "cannot read \(logPath): \(error)")
    }
    do {
      return try SessionTest(recording, source: logPath, name: name, stateChecks: stateChecks)
    } catch {
      throw InspectorError("cannot write a test of \(logPath): \(error)")
    }
  }

  /// The test file of `lines`, the lines of a log (a live session's, as the app sent them),
  /// whose comment names `source`.
  ///
  /// - Throws: An ``InspectorError`` when a line cannot be read, or no store of the lines can be
  ///   tested: each store and why, on a line of its own.
  public static func test(
    lines: [String], source: String, name: String = "SessionTests",
    stateChecks: SessionTest.StateChecks = .afterEveryAction
  ) throws(InspectorError) -> SessionTest {
    let recording: Recording
    do {
      recording = try Recording(jsonLines: lines.map { $0 + "\n" }.joined())
    } catch {
      throw InspectorError("cannot read the lines of \(source): \(error.message)")
    }
    do {
      return try SessionTest(recording, source: source, name: name, stateChecks: stateChecks)
    } catch {
      throw InspectorError("cannot write a test of \(source): \(error)")
    }
  }

  /// The suite name of a test file: its name without `.swift`, if that is a Swift type name
  /// (`SessionTests.swift` is `SessionTests`).
  public static func suiteName(forFile path: String) -> String? {
    let file = URL(fileURLWithPath: path).lastPathComponent
    guard file.hasSuffix(".swift") else { return nil }
    let name = String(file.dropLast(".swift".count))
    let isName =
      name.first.map { $0.isASCII && $0.isUppercase } == true
      && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    return isName ? name : nil
  }

  /// Writes the test of the log at `logPath` to `outputPath`, first beside it, then renamed into
  /// place; returns the stores it leaves out, and why.
  ///
  /// It never writes over the log, however the paths are spelled, nor, unless
  /// `replacingAnyFile`, over a file that is not a test it wrote (one whose first line is not
  /// ``SessionTest/marker``) or that it cannot read. A test it replaces keeps its permissions.
  ///
  /// - Parameters:
  ///   - logPath: The session's log.
  ///   - outputPath: The Swift file to write, named after its suite: `SessionTests.swift`.
  ///   - stateChecks: Which states the tests check.
  ///   - replacingAnyFile: Whether a file at `outputPath` that flux-inspector did not write is
  ///     replaced too (`--force`; the log itself never is).
  /// - Throws: An ``InspectorError`` naming the path and the cause.
  public static func write(
    logPath: String, to outputPath: String, stateChecks: SessionTest.StateChecks = .afterEveryAction,
    replacingAnyFile: Bool = false
  ) throws(InspectorError) -> [SessionTest.Problem] {
    guard let name = suiteName(forFile: outputPath) else {
      throw InspectorError(
        "cannot write \(outputPath): a test file is named after its suite, a Swift type name, such as SessionTests.swift"
      )
    }
    let target = URL(fileURLWithPath: outputPath)
    let folder = target.deletingLastPathComponent()
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
      throw InspectorError("cannot write \(outputPath): the folder \(folder.path) does not exist")
    }
    let permissions = try checkReplaceable(outputPath, logPath: logPath, replacingAnyFile: replacingAnyFile)
    let test = try test(logPath: logPath, name: name, stateChecks: stateChecks)
    let aside = folder.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp").path
    do {
      try NewFile.write(Array(test.text.utf8), to: aside, permissions: permissions)
    } catch {
      unlink(aside)
      throw InspectorError("cannot write \(outputPath): \(error.message)")
    }
    guard rename(aside, outputPath) == 0 else {
      let cause = LogFile.describe(errno)
      unlink(aside)
      throw InspectorError("cannot write \(outputPath): \(cause)")
    }
    let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0, fsync(descriptor) == 0 else {
      let cause = LogFile.describe(errno)
      if descriptor >= 0 { close(descriptor) }
      throw InspectorError("wrote \(outputPath), but cannot make its folder \(folder.path) keep it: \(cause)")
    }
    close(descriptor)
    return test.leftOut
  }

  /// Checks that the file at `path`, if any, may be replaced by a test, and returns the
  /// permissions to write with: its own, or those of a new source file.
  private static func checkReplaceable(_ path: String, logPath: String, replacingAnyFile: Bool) throws(InspectorError)
    -> mode_t
  {
    var info = stat()
    guard stat(path, &info) == 0 else {
      if errno == ENOENT {
        // A new file: readable by all, as the process's umask allows.
        let mask = umask(0o022)
        umask(mask)
        return 0o666 & ~mask
      }
      throw InspectorError("cannot write \(path): \(LogFile.describe(errno))")
    }
    if info.st_mode & S_IFMT == S_IFDIR { throw InspectorError("cannot write \(path): it is a folder") }
    var log = stat()
    if stat(logPath, &log) == 0, log.st_dev == info.st_dev, log.st_ino == info.st_ino {
      throw InspectorError("cannot write \(path): it is the log \(logPath), which is read")
    }
    guard info.st_mode & S_IFMT == S_IFREG else { throw InspectorError("cannot write \(path): it is not a file") }
    if replacingAnyFile { return info.st_mode & 0o7777 }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw InspectorError(
        "cannot write \(path): it cannot be read (\(LogFile.describe(errno))), so it may not be a test that "
          + "flux-inspector wrote; give --force to replace it")
    }
    var start = [UInt8](repeating: 0, count: SessionTest.marker.utf8.count)
    var count = 0
    while count < start.count {
      let result = start.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
      if result < 0 && errno == EINTR { continue }
      guard result >= 0 else {
        let cause = LogFile.describe(errno)
        close(descriptor)
        throw InspectorError(
          "cannot write \(path): it cannot be read (\(cause)), so it may not be a test that flux-inspector wrote; "
            + "give --force to replace it")
      }
      if result == 0 { break }
      count += result
    }
    close(descriptor)
    guard count == start.count, start.elementsEqual(SessionTest.marker.utf8) else {
      throw InspectorError(
        "cannot write \(path): it is not a test that flux-inspector wrote (its first line does not begin with "
          + "\"\(SessionTest.marker)\"); give another path, or --force to replace it")
    }
    return info.st_mode & 0o7777
  }
}
