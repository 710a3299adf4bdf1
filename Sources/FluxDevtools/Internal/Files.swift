import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The system's calls, under names that the methods called `read` and `write` do not hide.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(descriptor, buffer, count)
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  write(descriptor, buffer, count)
}

/// A file that could not be read or written: its path, and the cause in words.
package struct FileFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// The file or folder at fault.
  package let path: String
  /// Why, in words: "does not exist", "is a folder", "the disk is full".
  package let cause: String

  package init(path: String, cause: String) {
    self.path = path
    self.cause = cause
  }

  package init(path: String, errno code: Int32) {
    self.init(path: path, cause: FileCause.words(errno: code))
  }

  /// `path: cause`.
  package var description: String { "\(path): \(cause)" }
}

/// The cause of a file error in words, whatever reported it: `errno`, a `POSIXError`, or a
/// `CocoaError` (with the POSIX error under it when it has one).
package enum FileCause {
  package static func words(_ error: any Error) -> String {
    if let failure = error as? FileFailure { return failure.cause }
    if let error = error as? POSIXError { return words(errno: error.code.rawValue) }
    let error = error as NSError
    if error.domain == NSPOSIXErrorDomain { return words(errno: Int32(error.code)) }
    if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
      return words(errno: Int32(underlying.code))
    }
    if error.domain == NSCocoaErrorDomain {
      switch CocoaError.Code(rawValue: error.code) {
      case .fileNoSuchFile, .fileReadNoSuchFile: return "does not exist"
      case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
      case .fileWriteOutOfSpace: return "the disk is full"
      case .fileWriteVolumeReadOnly: return "the file system is read-only"
      case .fileWriteFileExists: return "already exists"
      case .fileReadInapplicableStringEncoding, .fileReadCorruptFile: return "not UTF-8 text"
      case .fileReadTooLarge: return "too large to read"
      case .fileWriteInvalidFileName, .fileReadInvalidFileName: return "not a valid file name"
      default: break
      }
    }
    return "the system failed with a cause it did not name"
  }

  package static func words(errno code: Int32) -> String {
    switch code {
    case ENOENT: return "does not exist"
    case EACCES, EPERM: return "permission denied"
    case EISDIR: return "is a folder"
    case ENOTDIR: return "a part of the path is not a folder"
    case ENOSPC: return "the disk is full"
    case EDQUOT: return "the disk quota is used up"
    case EFBIG: return "the file would pass the largest size this process may write"
    case EROFS: return "the file system is read-only"
    case EEXIST: return "already exists"
    case EIO: return "the device failed to read or write (input/output error)"
    case ENAMETOOLONG: return "the name is too long"
    case ELOOP: return "too many symbolic links"
    case EMFILE, ENFILE: return "too many files are open"
    case ENOTEMPTY: return "the folder is not empty"
    case EBUSY: return "it is in use"
    case EXDEV: return "it is on another file system"
    default: return String(cString: strerror(code)).lowercased()
    }
  }
}

/// Reading a whole file, with the cause of a failure in words.
package enum FileBytes {
  /// The bytes of the file at `url`.
  package static func read(_ url: URL) throws(FileFailure) -> [UInt8] {
    let path = url.path
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
      if count == 0 { return bytes }
      bytes.append(contentsOf: chunk[..<count])
    }
  }

  /// The offset, from 0, of the first byte of `bytes` that is not part of UTF-8 text; `nil`
  /// when all of them are.
  package static func firstNonUTF8Offset(_ bytes: some Collection<UInt8>) -> Int? {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var offset = 0
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue(let scalar): offset += UTF8.width(scalar)
      case .emptyInput: return nil
      case .error: return offset
      }
    }
  }
}

/// Folders, with the cause of a failure in words.
package enum FileFolders {
  /// Makes the folder at `url` and those above it that are missing, or throws why it cannot
  /// (a part of the path is a file, no permission).
  package static func make(_ url: URL) throws(FileFailure) {
    var status = stat()
    let path = url.path
    if stat(path, &status) == 0 {
      guard status.st_mode & S_IFMT == S_IFDIR else { throw FileFailure(path: path, cause: "is not a folder") }
      return
    }
    let parent = url.deletingLastPathComponent()
    if parent.path != path { try make(parent) }
    guard mkdir(path, 0o777) == 0 || errno == EEXIST else { throw FileFailure(path: path, errno: errno) }
  }
}

/// A file written aside and renamed into place: until ``commit(beforeRename:)``, the file at
/// the destination keeps its old content (or stays absent); after a failure, the aside file is
/// removed, as this type created it; nothing else is ever deleted.
///
/// Not thread-safe: one owner writes it, or a lock guards it.
package final class AsideFile {
  /// The file that ``commit(beforeRename:)`` replaces.
  package let destination: URL
  /// The file being written, in the destination's folder.
  package let asidePath: String
  private var descriptor: Int32

  /// Creates an empty file beside `destination`, named after it, or throws why it cannot
  /// (a folder where the file should be, a folder that does not exist, no permission).
  package init(replacing destination: URL) throws(FileFailure) {
    self.destination = destination
    let path = destination.path
    var status = stat()
    if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      throw FileFailure(path: path, cause: "is a folder")
    }
    let folder = destination.deletingLastPathComponent().path
    var folderStatus = stat()
    guard stat(folder, &folderStatus) == 0 else {
      throw FileFailure(path: path, cause: "the folder \(folder) \(FileCause.words(errno: errno))")
    }
    guard folderStatus.st_mode & S_IFMT == S_IFDIR else {
      throw FileFailure(path: path, cause: "\(folder) is not a folder")
    }
    var attempt = 0
    while true {
      let candidate = "\(path).partial-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
      let opened = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
      if opened >= 0 {
        asidePath = candidate
        descriptor = opened
        break
      }
      let code = errno
      attempt += 1
      guard code == EEXIST, attempt < 16 else { throw FileFailure(path: path, errno: code) }
    }
    // The new file keeps the old one's permissions.
    if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
      _ = fchmod(descriptor, status.st_mode & 0o7777)  // a failure leaves the usual permissions
    }
  }

  deinit {
    if descriptor >= 0 { discard() }
  }

  /// Appends `bytes`; on a failure, removes the aside file (or, with `keepingOnFailure`,
  /// closes it and leaves it, with what was written) and throws the cause.
  package func write(_ bytes: some Collection<UInt8>, keepingOnFailure: Bool = false) throws(FileFailure) {
    precondition(descriptor >= 0, "AsideFile: write after commit or discard")
    let bytes = Array(bytes)
    var written = 0
    while written < bytes.count {
      let count = bytes.withUnsafeBytes { buffer in
        systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
      }
      if count < 0 {
        let code = errno
        if code == EINTR { continue }
        if keepingOnFailure { abandon() } else { discard() }
        throw FileFailure(path: destination.path, errno: code)
      }
      written += count
    }
  }

  /// Writes the aside file to the disk and renames it into place; on a failure, removes it
  /// and throws the cause, and the destination keeps its old content.
  ///
  /// - Parameter beforeRename: Runs when the new content is on the disk, just before the rename.
  package func commit(beforeRename: () -> Void = {}) throws(FileFailure) {
    precondition(descriptor >= 0, "AsideFile: commit after commit or discard")
    let path = destination.path
    guard fsync(descriptor) == 0 else {
      let code = errno
      discard()
      throw FileFailure(path: path, errno: code)
    }
    let closed = close(descriptor)
    let closeCode = errno
    descriptor = -1
    guard closed == 0 else {
      unlink(asidePath)
      throw FileFailure(path: path, errno: closeCode)
    }
    beforeRename()
    guard rename(asidePath, path) == 0 else {
      let code = errno
      unlink(asidePath)
      throw FileFailure(path: path, errno: code)
    }
    // The rename is done: a folder that cannot be synced leaves it in place all the same.
    let folder = open(destination.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
    if folder >= 0 {
      _ = fsync(folder)
      close(folder)
    }
  }

  /// Closes the aside file and removes it, leaving the destination as it was.
  package func discard() {
    guard descriptor >= 0 else { return }
    close(descriptor)
    descriptor = -1
    unlink(asidePath)
  }

  /// Closes the aside file and leaves it where it is, with what was written to it.
  package func abandon() {
    guard descriptor >= 0 else { return }
    close(descriptor)
    descriptor = -1
  }
}
