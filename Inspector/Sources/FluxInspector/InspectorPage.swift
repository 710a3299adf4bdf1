import Foundation

#if canImport(Glibc)
  import Glibc
  private let systemWrite = Glibc.write
#elseif canImport(Musl)
  import Musl
  private let systemWrite = Musl.write
#elseif canImport(Darwin)
  import Darwin
  private let systemWrite = Darwin.write
#endif

/// The page of the inspector: HTML, a script and a style sheet, served as they are or put
/// together into one self-contained file.
public enum InspectorPage {
  /// The page as the server serves it: it loads `/inspector.css`, `/inspector.js` and `/log`.
  public static var html: String { resource("index.html") }
  /// The page's script.
  public static var script: String { resource("inspector.js") }
  /// The page's style sheet.
  public static var style: String { resource("inspector.css") }

  /// One HTML file with the style, the script and the log `document` (as ``LogDocument`` makes
  /// it) inside: it opens from disk, with no server and no live updates.
  ///
  /// - Parameter document: The log, as JSON text.
  /// - Returns: The HTML text.
  public static func selfContained(document: String) -> String {
    // Inside a `<script>` element, "</script" would end it, and "<!--" change how it is read:
    // every "<" is escaped, which JSON allows, as it can only be in a string. The script and
    // style are ours and hold no "</script" or "</style".
    let data = document.replacingOccurrences(of: "<", with: "\\u003c")
    return html.replacingOccurrences(
      of: "<link rel=\"stylesheet\" href=\"inspector.css\">", with: "<style>\n\(style)</style>"
    ).replacingOccurrences(
      of: "<script src=\"inspector.js\"></script>",
      with: "<script id=\"flux-log\" type=\"application/json\">\(data)</script>\n<script>\n\(script)</script>")
  }

  /// Writes the self-contained page of the log at `logPath` to `outputPath`: first beside it,
  /// then renamed into place, so that a file already there is replaced whole or not at all.
  ///
  /// - Parameters:
  ///   - logPath: The log to show.
  ///   - outputPath: The HTML file to write.
  /// - Throws: An ``InspectorError`` naming the cause when the log cannot be read or the file
  ///   cannot be written.
  public static func writeSelfContained(logPath: String, to outputPath: String) throws(InspectorError) {
    let page = selfContained(document: try LogDocument.json(path: logPath))
    let target = URL(fileURLWithPath: outputPath)
    let folder = target.deletingLastPathComponent()
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
      throw InspectorError("cannot write \(outputPath): the folder \(folder.path) does not exist")
    }
    if FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder), isFolder.boolValue {
      throw InspectorError("cannot write \(outputPath): it is a folder")
    }
    let aside = folder.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp").path
    do {
      try write(Array(page.utf8), to: aside)
    } catch {
      unlink(aside)
      throw InspectorError("cannot write \(outputPath): \(error.message)")
    }
    guard rename(aside, target.path) == 0 else {
      let cause = LogFile.describe(errno)
      unlink(aside)
      throw InspectorError("cannot write \(outputPath): \(cause)")
    }
  }

  /// Writes `bytes` to a new file at `path`, and to the disk, or says why not.
  private static func write(_ bytes: [UInt8], to path: String) throws(InspectorError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw InspectorError(LogFile.describe(errno)) }
    var done = 0
    while done < bytes.count {
      let result = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + done, bytes.count - done) }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        let cause = result < 0 ? LogFile.describe(errno) : "the disk took no more"
        close(descriptor)
        throw InspectorError(cause)
      }
      done += result
    }
    let synced = fsync(descriptor) == 0 ? nil : LogFile.describe(errno)
    let closed = close(descriptor) == 0 ? nil : LogFile.describe(errno)
    if let cause = synced ?? closed { throw InspectorError(cause) }
  }

  private static func resource(_ name: String) -> String {
    guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Page"),
      let text = try? String(contentsOf: url, encoding: .utf8)
    else {
      preconditionFailure("flux-inspector: its page, \(name), is missing from its resources: build it again")
    }
    return text
  }
}
