import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension InspectorPage {
  /// Writes the self-contained page of the log at `logPath` to `outputPath`: first beside it,
  /// then renamed into place, so that a file already there is replaced whole or not at all.
  ///
  /// It never writes over the log it reads, however the two paths are spelled (a link to the
  /// log, or the log itself under another name, is the log), and never over a file that is not
  /// a page it wrote before unless `replacingAnyFile` is true: neither is a report to replace.
  /// A page it replaces keeps its permissions (a report only its owner may read stays so); a new
  /// one gets those of the log, without the right to run it (a report is read by those who may
  /// read the log).
  ///
  /// ```swift
  /// try InspectorPage.writeSelfContained(logPath: "session.jsonl", to: "report.html")
  /// ```
  ///
  /// - Parameters:
  ///   - logPath: The log to show.
  ///   - outputPath: The HTML file to write.
  ///   - replacingAnyFile: Whether a file at `outputPath` that is not a page that
  ///     flux-inspector wrote is replaced too (the log itself never is).
  /// - Throws: An ``InspectorError`` naming the path and the cause when the log cannot be read,
  ///   the file at `outputPath` is not to be replaced, or the page cannot be written.
  public static func writeSelfContained(
    logPath: String, to outputPath: String, replacingAnyFile: Bool = false
  ) throws(InspectorError) {
    guard !outputPath.isEmpty else { throw InspectorError("cannot write a page to an empty path: name a file") }
    let (document, log) = try LogDocument.read(path: logPath)
    let target = URL(fileURLWithPath: outputPath)
    let folder = target.deletingLastPathComponent()
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
      throw InspectorError("cannot write \(outputPath): the folder \(folder.path) does not exist")
    }
    let permissions = try checkReplaceable(
      outputPath, log: log, logPath: logPath, replacingAnyFile: replacingAnyFile)
    let page = selfContained(document: document)
    let aside = folder.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp").path
    do {
      try NewFile.write(Array(page.utf8), to: aside, permissions: mode_t(permissions ?? log.permissions & 0o666))
    } catch {
      unlink(aside)
      throw InspectorError("cannot write \(outputPath): \(error.message)")
    }
    guard rename(aside, outputPath) == 0 else {
      let cause = LogFile.describe(errno)
      unlink(aside)
      throw InspectorError("cannot write \(outputPath): \(cause)")
    }
    // The rename is on the disk once the folder is.
    let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0, fsync(descriptor) == 0 else {
      let cause = LogFile.describe(errno)
      if descriptor >= 0 { close(descriptor) }
      throw InspectorError("wrote \(outputPath), but cannot make its folder \(folder.path) keep it: \(cause)")
    }
    close(descriptor)
  }

  /// Checks that the file at `path`, if any, may be replaced by a page of the log, and returns
  /// its permissions; `nil` when nothing is there.
  private static func checkReplaceable(
    _ path: String, log: LogFile.Identity, logPath: String, replacingAnyFile: Bool
  ) throws(InspectorError) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else {
      if errno == ENOENT { return nil }
      throw InspectorError("cannot write \(path): \(LogFile.describe(errno))")
    }
    if info.st_mode & S_IFMT == S_IFDIR { throw InspectorError("cannot write \(path): it is a folder") }
    if UInt64(info.st_dev) == log.device && UInt64(info.st_ino) == log.inode {
      throw InspectorError("cannot write \(path): it is the log \(logPath), which is read")
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw InspectorError("cannot write \(path): it is not a file")
    }
    if !replacingAnyFile {
      let start: [UInt8]
      do {
        start = try LogFile.withOpenFile(path: path) { descriptor, file throws(InspectorError) in
          try LogFile.read(descriptor, path: path, in: 0..<min(file.size, 4 << 20))
        }
      } catch {
        throw InspectorError(
          "cannot write \(path): it cannot be read (\(error.message)), so it may not be a page that flux-inspector "
            + "wrote; give --force to replace it")
      }
      guard isPage(start) else {
        throw InspectorError(
          "cannot write \(path): it is not a page that flux-inspector wrote; give --force to replace it")
      }
    }
    return Int(info.st_mode & 0o7777)
  }

  /// Whether `start`, the start of a file, is that of a self-contained page.
  private static func isPage(_ start: [UInt8]) -> Bool {
    let text = String(decoding: start.prefix(64), as: UTF8.self).lowercased()
    return text.hasPrefix("<!doctype html") && Data(start).range(of: Data(dataElement.utf8)) != nil
  }
}
