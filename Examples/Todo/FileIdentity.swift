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
  /// Why a device, a pipe or a socket is neither read nor replaced.
  static let notAPlainFile = "is not a plain file (a device, a pipe or a socket)"

  /// The bytes of the file at `path` and the identity of the file they were read from (one
  /// open file: no other file can come between), or the cause in words.
  ///
  /// Only a plain file is read: a pipe would keep the read waiting for a writer, and a device
  /// such as `/dev/zero` would fill the memory, so either is refused, as `save` refuses to
  /// replace one.
  static func read(_ path: String) throws(FileFailure) -> (identity: FileIdentity, bytes: [UInt8]) {
    // Without waiting: opening a pipe to read waits until something opens it to write.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else { throw FileFailure(path: path, errno: errno) }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw FileFailure(path: path, errno: errno) }
    switch status.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: throw FileFailure(path: path, cause: "is a folder")
    default: throw FileFailure(path: path, cause: notAPlainFile)
    }
    // A plain file is read as usual: waiting for the disk, as a read without the flag does.
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
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
        throw FileFailure(path: target, cause: notAPlainFile)
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

/// A lock on a folder that every `todo` session takes to save into it, held from the check of
/// what a save replaces until the save has renamed its file into place: two sessions that save
/// one file at once never both replace it, as the second checks once the first has saved, and
/// finds a file it has not loaded.
///
/// An advisory lock (`flock`) on the folder itself, so nothing is added to the folder: the
/// system lets go of it when the lock is freed, or when the process ends, even by `kill -9`.
/// Other programs do not take it.
final class FolderLock {
  private let descriptor: Int32

  /// How long, in milliseconds, a save waits for another session's save in the same folder.
  static let patience = 10_000

  /// Takes the lock of `folder`, waiting for a save of another session there to end; `nil` when
  /// the folder cannot be opened to lock it (it does not exist, or may not be read), and the
  /// save, which then runs without the lock, says what is wrong, if anything. Throws when
  /// another session keeps the lock longer than ``patience`` (a session stopped in a save).
  init?(folder: String) throws(FileFailure) {
    let opened = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard opened >= 0 else { return nil }
    var waited = 0
    while flock(opened, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      guard code == EWOULDBLOCK || code == EINTR else {
        close(opened)
        return nil  // a file system without locks: the save runs as it would without one
      }
      guard waited < Self.patience else {
        close(opened)
        throw FileFailure(path: folder, cause: "another program is saving into it; try again when it is done")
      }
      usleep(10_000)
      waited += 10
    }
    descriptor = opened
  }

  deinit {
    close(descriptor)  // lets go of the lock
  }
}
