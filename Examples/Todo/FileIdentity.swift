import FluxDevtools
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The system's call, under a name that the method called `read` does not hide.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(descriptor, buffer, count)
}

/// A file on its device, whatever path names it: `todo-lists//todo.md`, an absolute path, a
/// path through a linked folder and a link to the file all name one identity.
struct FileIdentity: Hashable {
  let device: UInt64
  let inode: UInt64

  init(_ status: stat) {
    device = UInt64(truncatingIfNeeded: status.st_dev)
    inode = UInt64(truncatingIfNeeded: status.st_ino)
  }

  /// The identity of the file at `path` (links followed), or `nil` when there is none or it
  /// cannot be looked at.
  init?(path: String) {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    self.init(status)
  }
}

/// What a file held, in little room: two contents with one fingerprint are taken for the same.
struct Fingerprint: Equatable {
  let count: Int
  let hash: Int

  init(_ bytes: [UInt8]) {
    var hasher = Hasher()
    bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    count = bytes.count
    hash = hasher.finalize()
  }

  init(_ text: String) {
    self.init(Array(text.utf8))
  }
}

/// Files as the `todo` example reads and replaces them.
enum TodoFiles {
  /// The bytes of the file at `path` and the identity of the file they were read from (one
  /// open file: no other file can come between), or the cause in words.
  static func read(_ path: String) throws(FileFailure) -> (identity: FileIdentity, bytes: [UInt8]) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileFailure(path: path, errno: errno) }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw FileFailure(path: path, errno: errno) }
    if status.st_mode & S_IFMT == S_IFDIR { throw FileFailure(path: path, cause: "is a folder") }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw FileFailure(path: path, errno: errno)
      }
      if count == 0 { return (FileIdentity(status), bytes) }
      bytes.append(contentsOf: chunk[..<count])
    }
  }

  /// The path of the file that a save of `path` replaces: `path` itself, or, when it is a
  /// symbolic link, the file the link leads to (through every link of a chain), so that the
  /// save renames its new file onto that one and the links keep leading to it. The file need
  /// not exist; a folder there is left for the save to report.
  ///
  /// Throws when the links go round, or the file is a device, a pipe or a socket, which a
  /// save never replaces.
  static func saveTarget(of path: String) throws(FileFailure) -> String {
    var target = path
    for _ in 0..<40 {
      var status = stat()
      guard lstat(target, &status) == 0 else { return target }  // nothing there: the save makes it
      switch status.st_mode & S_IFMT {
      case S_IFLNK:
        target = try following(link: target)
      case S_IFREG, S_IFDIR:
        return target
      default:
        throw FileFailure(path: target, cause: "is not a plain file (a device, a pipe or a socket)")
      }
    }
    throw FileFailure(path: path, errno: ELOOP)
  }

  /// The path that the link at `path` holds, read from the link's folder when relative.
  private static func following(link path: String) throws(FileFailure) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count)
    guard count >= 0 else { throw FileFailure(path: path, errno: errno) }
    guard count < buffer.count else { throw FileFailure(path: path, errno: ENAMETOOLONG) }
    let bytes = buffer[..<count].map { UInt8(bitPattern: $0) }
    guard FileBytes.firstNonUTF8Offset(bytes) == nil else {
      throw FileFailure(path: path, cause: "is a link to a name that is not UTF-8")
    }
    let destination = String(decoding: bytes, as: UTF8.self)
    if destination.hasPrefix("/") { return destination }
    return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(destination).path
  }
}
