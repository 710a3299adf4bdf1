#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The action log on disk: read whole, or from a byte offset on, and told apart from a file
/// put in its place.
///
/// A log that is still being recorded is read where it is being written: ``ActionLogOutput``'s
/// file output writes beside its file, to `NAME.partial-…`, and renames that into place when
/// the recording ends (rename keeps the file, so a page that follows it sees no change). While
/// such a file is newer than the one at the path, or the path holds nothing yet, that file is
/// the log (``recording(path:)``).
///
/// Only a regular file is a log: a directory, a FIFO or a device at the path is refused with
/// an error that says so, before anything reads from it (reading a FIFO would wait for a
/// writer).
public enum LogFile {
  /// Which file a path named when it was read, and how long it was.
  public struct Identity: Sendable, Equatable {
    /// The device of the file.
    public let device: UInt64
    /// The file's inode on that device: a file written in place of the log has another.
    public let inode: UInt64
    /// The length of the file, in bytes.
    public let size: Int
  }

  /// What was read, and from which file.
  public struct Contents: Sendable {
    /// The bytes from the offset asked for up to the end of the file as it was then.
    public let bytes: [UInt8]
    /// The file that was read.
    public let identity: Identity
  }

  /// Tells which file is at `path` now, without reading it.
  ///
  /// - Parameter path: The log's path.
  /// - Returns: The file, its inode and its length.
  /// - Throws: An ``InspectorError`` when nothing is there, or something that is not a regular file.
  public static func identity(path: String) throws(InspectorError) -> Identity {
    let path = recording(path: path)
    var info = stat()
    guard stat(path, &info) == 0 else { throw cannotOpen(path, errno: errno) }
    try checkRegular(info, path: path)
    return Identity(info)
  }

  /// Checks that the file at `path` is a regular file that this process may open to read.
  ///
  /// - Parameter path: The log's path.
  /// - Returns: The file, its inode and its length.
  /// - Throws: An ``InspectorError`` that says why not.
  @discardableResult
  public static func checkReadable(path: String) throws(InspectorError) -> Identity {
    try read(path: path, from: Int.max).identity
  }

  /// Reads the file at `path` from byte `offset` to its end.
  ///
  /// - Parameters:
  ///   - path: The log's path.
  ///   - offset: The first byte to read; past the end, nothing is read.
  /// - Returns: The bytes and the file they came from.
  /// - Throws: An ``InspectorError`` naming the cause when the file cannot be opened or read.
  public static func read(path: String, from offset: Int = 0) throws(InspectorError) -> Contents {
    let path = recording(path: path)
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { throw cannotOpen(path, errno: errno) }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw cannotRead(path, errno: errno) }
    try checkRegular(info, path: path)
    let identity = Identity(info)
    let count = max(0, identity.size - offset)
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let result = bytes.withUnsafeMutableBytes { buffer in
        pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
      }
      if result < 0 {
        if errno == EINTR { continue }
        throw cannotRead(path, errno: errno)
      }
      // The file was cut short while it was read: what is there is what was read.
      if result == 0 { break }
      done += result
    }
    bytes.removeLast(count - done)
    return Contents(bytes: bytes, identity: identity)
  }

  /// The file that holds the log of `path` now: the newest regular file named
  /// `NAME.partial-…` beside it (the recording that an ``ActionLogOutput`` file output is
  /// writing) when it is newer than the file at `path` or nothing is there yet; `path` itself
  /// otherwise.
  ///
  /// - Parameter path: The log's path, as given.
  /// - Returns: The path to read.
  public static func recording(path: String) -> String {
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let prefix = (slash.map { String(path[path.index(after: $0)...]) } ?? path) + ".partial-"
    guard let directory = opendir(folder) else { return path }
    defer { closedir(directory) }
    var newest: (path: String, time: timespec)? = nil
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      guard name.hasPrefix(prefix) else { continue }
      let candidate = folder == "/" ? "/" + name : folder + "/" + name
      var info = stat()
      guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
      let time = modified(info)
      if newest.map({ isLater(time, than: $0.time) }) ?? true { newest = (candidate, time) }
    }
    guard let newest else { return path }
    var info = stat()
    guard stat(path, &info) == 0 else { return newest.path }
    return isLater(newest.time, than: modified(info)) ? newest.path : path
  }

  private static func modified(_ info: stat) -> timespec {
    #if canImport(Darwin)
      info.st_mtimespec
    #else
      info.st_mtim
    #endif
  }

  private static func isLater(_ a: timespec, than b: timespec) -> Bool {
    a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec
  }

  private static func checkRegular(_ info: stat, path: String) throws(InspectorError) {
    let kind = info.st_mode & S_IFMT
    guard kind != S_IFREG else { return }
    let what =
      switch kind {
      case S_IFDIR: "a directory"
      case S_IFIFO: "a FIFO (named pipe)"
      case S_IFSOCK: "a socket"
      case S_IFCHR, S_IFBLK: "a device"
      default: "not a regular file"
      }
    throw InspectorError("cannot read the log \(path): it is \(what), not a file")
  }

  private static func cannotOpen(_ path: String, errno code: Int32) -> InspectorError {
    if code == ENOENT { return InspectorError("no log at \(path): no such file") }
    return InspectorError("cannot open the log \(path): \(describe(code))")
  }

  private static func cannotRead(_ path: String, errno code: Int32) -> InspectorError {
    InspectorError("cannot read the log \(path): \(describe(code))")
  }

  /// The system's words for an error number, in lower case, as in a sentence.
  static func describe(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "an error the system has no words for" }
    let words = String(cString: text)
    return words.prefix(1).lowercased() + words.dropFirst()
  }
}

extension LogFile.Identity {
  fileprivate init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int(info.st_size)
  }
}
