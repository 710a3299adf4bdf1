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
/// The log is the file at the path it was given, and only that file: its writer appends to it
/// there, one whole line per write, so it is read there as it grows. Nothing else in its folder
/// is looked at.
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
    /// When the file's contents and its status last changed: a file that keeps these and its
    /// length has not been written since.
    let stamp: [Int]
    /// Who may read and write it (`0o600`, say).
    let permissions: Int
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
    try withOpenFile(path: path) { _, identity in identity }
  }

  /// Reads the file at `path` from byte `offset` to its end.
  ///
  /// - Parameters:
  ///   - path: The log's path.
  ///   - offset: The first byte to read; past the end, nothing is read.
  /// - Returns: The bytes and the file they came from.
  /// - Throws: An ``InspectorError`` naming the cause when the file cannot be opened or read.
  public static func read(path: String, from offset: Int = 0) throws(InspectorError) -> Contents {
    try withOpenFile(path: path) { descriptor, identity throws(InspectorError) in
      let start = min(max(0, offset), identity.size)
      let bytes = try read(descriptor, path: path, in: start..<identity.size)
      return Contents(bytes: bytes, identity: identity)
    }
  }

  /// Opens the regular file at `path` to read, and calls `body` with it and what it is.
  static func withOpenFile<Result>(
    path: String, _ body: (Int32, Identity) throws(InspectorError) -> Result
  ) throws(InspectorError) -> Result {
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { throw cannotOpen(path, errno: errno) }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw cannotRead(path, errno: errno) }
    try checkRegular(info, path: path)
    return try body(descriptor, Identity(info))
  }

  /// The most bytes read at once: the whole log when it is loaded, or one long line. A file can
  /// claim any length (`truncate -s 100G` takes no room on the disk), and bytes that do not fit
  /// in memory would stop the server (rule 21).
  static let largestRead = 1 << 30

  /// The bytes of `range` in the file open as `descriptor`: fewer when the file ends first (it
  /// was cut short while it was read).
  ///
  /// - Throws: An ``InspectorError`` when the file cannot be read, or `range` holds more than
  ///   ``largestRead`` bytes.
  static func read(_ descriptor: Int32, path: String, in range: Range<Int>) throws(InspectorError) -> [UInt8] {
    guard range.count <= largestRead else {
      throw InspectorError(
        "cannot read the log \(path): it has \(range.count) bytes to read, more than the 1 GiB "
          + "(\(largestRead) bytes) that the inspector reads")
    }
    var bytes = [UInt8](repeating: 0, count: range.count)
    var done = 0
    while done < range.count {
      let result = bytes.withUnsafeMutableBytes { buffer in
        pread(descriptor, buffer.baseAddress! + done, range.count - done, off_t(range.lowerBound + done))
      }
      if result < 0 {
        if errno == EINTR { continue }
        throw cannotRead(path, errno: errno)
      }
      if result == 0 { break }
      done += result
    }
    bytes.removeLast(range.count - done)
    return bytes
  }

  /// The bytes of `range` in the file open as `descriptor`, or `nil` when they cannot all be
  /// read.
  static func bytes(of descriptor: Int32, in range: Range<Int>) -> [UInt8]? {
    guard range.lowerBound >= 0, let bytes = try? read(descriptor, path: "", in: range), bytes.count == range.count
    else { return nil }
    return bytes
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
    #if canImport(Darwin)
      let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
    #else
      let (modified, changed) = (info.st_mtim, info.st_ctim)
    #endif
    stamp = [Int(modified.tv_sec), Int(modified.tv_nsec), Int(changed.tv_sec), Int(changed.tv_nsec)]
    permissions = Int(info.st_mode & 0o7777)
  }
}
