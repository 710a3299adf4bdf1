import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The system's calls, under names that the methods called `write` and `discard` do not hide.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  write(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) -> Int32 {
  close(descriptor)
}

/// A file that grows at its own path, one whole line per write, and that one writer holds.
///
/// Opening it makes a new, empty file at the path; what was there before (a file, or a
/// symbolic link) is kept beside it under the first free name `PATH.1`, `PATH.2`, … (as
/// logrotate's `name.1`), never overwritten, never removed. The new file holds an exclusive
/// `flock` for as long as it is open: a second opener, in this process or another, finds the
/// file at the path locked and is refused before it moves anything. The kernel gives the lock
/// back when its holder dies, so a killed writer leaves nothing that refuses the next one.
///
/// How openers cannot step on each other:
/// - The new file is made under a temporary name and locked before it appears at the path
///   (by `link`, which fails if the path was taken meanwhile, or by `rename` over the old file,
///   which the opener holds locked): a file at the path is never seen unlocked while a writer
///   opens it.
/// - The old file is locked before it is moved, and after the lock is taken the opener checks
///   that the path still names the file it locked (another opener may have moved that file
///   aside and put its own in its place just before): if not, it looks again.
/// - The old file is kept by `link`, which never replaces an existing name.
///
/// On a file system without hard links (FAT, exFAT), or when the system will not link the old
/// file (a file of another user, under Linux's protected hard links), the old file is renamed to
/// a `PATH.N` that this opener reserved first with an empty file (so no rename replaces another
/// file), and the new file is made at the free path, then locked. For that moment the path is
/// free, and then holds a file not yet locked: an opener that comes then may take the path, or
/// lock that new file first and keep it aside, empty, as the file it found; one of them wins,
/// the others are refused, and nothing written is lost.
///
/// A process killed while it opens may leave its empty temporary file (`PATH.opening-…`), or
/// a second name (`PATH.N`) of the old file, which is still at the path, or (without hard
/// links) an empty `PATH.N`, or the old file at `PATH.N` and nothing at the path: nothing is
/// lost.
///
/// The descriptor is closed on `exec`, but a child forked while the file is open shares it,
/// and its lock, until the child executes its program or ends: an opener in that moment is
/// refused, as if the writer still ran.
///
/// Not thread-safe: one owner writes it, or a lock guards it.
package final class AppendingFile {
  /// The path the lines go to.
  package let path: String
  /// Where the file that was at the path when it opened is kept, if there was one.
  package let previous: String?
  /// Which file ``previous`` named when it was kept.
  private let previousIdentity: FileIdentity?
  private var descriptor: Int32

  /// Opens `url` for a new log, or throws why it cannot: a folder at the path or where its
  /// folder should be, another writer holding the file there, no permission.
  package init(at url: URL) throws(FileFailure) {
    let path = url.path
    self.path = path
    try Self.checkFolder(of: url)
    var attempt = 0
    while true {
      attempt += 1
      // Each turn either opens, fails, or finds that another opener changed the path meanwhile.
      guard attempt <= 64 else { throw FileFailure(path: path, cause: "it kept changing while the log opened it") }
      if let (descriptor, previous) = try Self.takePath(path) {
        Self.syncFolder(of: url)
        self.descriptor = descriptor
        self.previous = previous
        self.previousIdentity = previous.flatMap { FileIdentity(linkAt: $0) }
        return
      }
    }
  }

  deinit {
    if descriptor >= 0 { _ = systemClose(descriptor) }
  }

  /// Appends `bytes`, in one `write` (more only if the system writes part of them). On a
  /// failure, removes the part of `bytes` that was written, so that the file ends with a whole
  /// line, and throws the cause; what was written before stays.
  ///
  /// A write that reaches the process's file-size limit fails with "the file would pass the
  /// largest size this process may write", whatever the thread: `SIGXFSZ`, which the system
  /// sends then and which would end the process, is blocked on this thread for the write, and
  /// taken back if it came (unless the thread blocked it already, or the process handles it).
  package func write(_ bytes: [UInt8]) throws(FileFailure) {
    precondition(descriptor >= 0, "AppendingFile: write after close")
    var fileSize = sigset_t()
    sigemptyset(&fileSize)
    sigaddset(&fileSize, SIGXFSZ)
    var mask = sigset_t()
    pthread_sigmask(SIG_BLOCK, &fileSize, &mask)
    defer { pthread_sigmask(SIG_SETMASK, &mask, nil) }
    do throws(FileFailure) {
      try writeAll(bytes)
    } catch {
      if sigismember(&mask, SIGXFSZ) == 0 { Self.takeBackFileSizeSignal() }
      throw error
    }
  }

  /// Takes the pending `SIGXFSZ` a write past the file-size limit sent, if one is pending and
  /// the process would end by it (no handler, not ignored).
  private static func takeBackFileSizeSignal() {
    var action = sigaction()
    guard sigaction(SIGXFSZ, nil, &action) == 0, isDefault(action) else { return }
    var pending = sigset_t()
    guard sigpending(&pending) == 0, sigismember(&pending, SIGXFSZ) == 1 else { return }
    var fileSize = sigset_t()
    sigemptyset(&fileSize)
    sigaddset(&fileSize, SIGXFSZ)
    var taken: Int32 = 0
    _ = sigwait(&fileSize, &taken)
  }

  /// Whether `action` is the default one.
  private static func isDefault(_ action: sigaction) -> Bool {
    #if canImport(Darwin)
      return action.__sigaction_u.__sa_handler == nil
    #else
      return action.__sigaction_handler.sa_handler == nil
    #endif
  }

  /// Appends `bytes`; see ``write(_:)``.
  private func writeAll(_ bytes: [UInt8]) throws(FileFailure) {
    var written = 0
    while written < bytes.count {
      let count = bytes.withUnsafeBytes { buffer in
        systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
      }
      if count <= 0 {
        // Nothing written for bytes to write is a failure too (one the system does not name),
        // not a reason to try forever.
        let code = count < 0 ? errno : EIO
        if code == EINTR { continue }
        if written > 0 { removeLast(written) }
        throw FileFailure(path: path, errno: code)
      }
      written += count
    }
  }

  /// Cuts the last `count` bytes off the file: the start of a line whose write failed.
  private func removeLast(_ count: Int) {
    var status = stat()
    guard fstat(descriptor, &status) == 0, Int(status.st_size) >= count else { return }
    // A failure leaves the start of the line: a reader sees a log cut short, as after a crash.
    _ = ftruncate(descriptor, status.st_size - off_t(count))
  }

  /// Writes the file to the disk and closes it, which gives back its lock; throws why the lines
  /// may not all be on the disk, or why they are no longer at the path (another program moved or
  /// removed the file meanwhile). Closed even when it throws.
  package func close() throws(FileFailure) {
    precondition(descriptor >= 0, "AppendingFile: closed twice")
    let descriptor = self.descriptor
    self.descriptor = -1
    var failure: FileFailure?
    if fsync(descriptor) != 0 {
      failure = FileFailure(path: path, cause: "the lines may not be on the disk: \(FileCause.words(errno: errno))")
    } else if !Self.isAtPath(descriptor, path) {
      failure = FileFailure(
        path: path, cause: "another program moved or removed the file while the log was written to it")
    }
    if systemClose(descriptor) != 0, failure == nil {
      failure = FileFailure(path: path, cause: "the lines may not be on the disk: \(FileCause.words(errno: errno))")
    }
    if let failure { throw failure }
  }

  /// Closes the file, removes it, and puts back at the path what was there when it opened: for
  /// a log that is not to be kept. Leaves everything as it is when the path no longer names this
  /// file, or the kept name no longer names the old one.
  package func discard() {
    guard descriptor >= 0 else { return }
    defer {
      _ = systemClose(descriptor)
      descriptor = -1
    }
    guard Self.isAtPath(descriptor, path) else { return }
    if let previous {
      // Puts the old file back in the place of this one, in one step, while this one's lock
      // keeps other openers away.
      if let previousIdentity, FileIdentity(linkAt: previous) == previousIdentity { _ = rename(previous, path) }
    } else {
      unlink(path)
    }
  }

  // MARK: Opening

  /// Why a second opener is refused.
  private static let refusal = "another action log is writing to it (in this process or another); only one may"

  /// Throws why the folder of `url` cannot hold the log.
  private static func checkFolder(of url: URL) throws(FileFailure) {
    let path = url.path
    let folder = url.deletingLastPathComponent().path
    var status = stat()
    guard stat(folder, &status) == 0 else {
      throw FileFailure(path: path, cause: "the folder \(folder) \(FileCause.words(errno: errno))")
    }
    guard status.st_mode & S_IFMT == S_IFDIR else { throw FileFailure(path: path, cause: "\(folder) is not a folder") }
  }

  /// One attempt to make the path this writer's: the locked descriptor of the new file there,
  /// and where the old one is kept; `nil` when another opener changed the path meanwhile.
  private static func takePath(_ path: String) throws(FileFailure) -> (Int32, String?)? {
    var status = stat()
    guard lstat(path, &status) == 0 else {
      let code = errno
      guard code == ENOENT else { throw FileFailure(path: path, errno: code) }
      return try placeNew(at: path)
    }
    if status.st_mode & S_IFMT == S_IFLNK {
      guard stat(path, &status) == 0 else {
        let code = errno
        let target = linkTarget(path) ?? "a file"
        throw FileFailure(
          path: path,
          cause: code == ENOENT
            ? "is a symbolic link to \(target), which does not exist"
            : "is a symbolic link to \(target), which cannot be followed: \(FileCause.words(errno: code))")
      }
    }
    switch status.st_mode & S_IFMT {
    case S_IFDIR: throw FileFailure(path: path, cause: "is a folder")
    case S_IFREG: break
    default: throw FileFailure(path: path, cause: "is not a regular file")
    }
    guard let old = try lockOld(at: path) else { return nil }
    defer { _ = systemClose(old) }  // after the new file is in its place: gives back the old one's lock
    return try replace(old: old, at: path)
  }

  /// Makes the new file, locked, and links it to the free `path`; `nil` if the path was taken
  /// meanwhile.
  private static func placeNew(at path: String) throws(FileFailure) -> (Int32, String?)? {
    let (temporary, descriptor) = try makeLocked(beside: path, permissions: nil)
    defer { unlink(temporary) }
    guard link(temporary, path) == 0 else {
      let code = errno
      _ = systemClose(descriptor)
      if code == EEXIST { return nil }
      if cannotLink(code) { return try createLocked(at: path, permissions: nil).map { ($0, nil) } }
      throw FileFailure(path: path, errno: code)
    }
    return (descriptor, nil)
  }

  /// Opens the file at `path` and takes its lock: throws when another writer holds it; `nil`
  /// when the path no longer names the file that was locked.
  private static func lockOld(at path: String) throws(FileFailure) -> Int32? {
    var old = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    if old < 0, errno == EACCES { old = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
    guard old >= 0 else {
      let code = errno
      if code == ENOENT { return nil }
      throw FileFailure(
        path: path,
        cause:
          "the file there cannot be opened to check that no other log writes to it: \(FileCause.words(errno: code))")
    }
    // A name that became something else than a file since it was looked at: look again.
    var status = stat()
    guard fstat(old, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
      _ = systemClose(old)
      return nil
    }
    while flock(old, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      if code == EINTR { continue }
      _ = systemClose(old)
      if code == EWOULDBLOCK {
        throw FileFailure(path: path, cause: refusal)
      }
      throw FileFailure(path: path, cause: "its lock cannot be taken: \(FileCause.words(errno: code))")
    }
    guard isAtPath(old, path) else {
      _ = systemClose(old)
      return nil
    }
    return old
  }

  /// With the file at `path` locked as `old`: keeps it under the first free `PATH.N`, and puts
  /// a new, locked file in its place.
  private static func replace(old: Int32, at path: String) throws(FileFailure) -> (Int32, String?) {
    var status = stat()
    let permissions = fstat(old, &status) == 0 ? status.st_mode & 0o7777 : nil
    let (temporary, descriptor) = try makeLocked(beside: path, permissions: permissions)
    var number = 1
    var kept: String
    while true {
      kept = "\(path).\(number)"
      if link(path, kept) == 0 { break }
      let code = errno
      guard code == EEXIST, number < 1_000_000 else {
        // Closed before it is unlinked: a FUSE file system (fusefat, sshfs) keeps a file unlinked
        // while open under a name of its own (`.fuse_hidden…`) until the close is handled.
        _ = systemClose(descriptor)
        unlink(temporary)
        if cannotLink(code) { return try replaceWithoutLinks(at: path, permissions: permissions) }
        throw FileFailure(
          path: path, cause: "the file there cannot be kept beside it as \(kept): \(FileCause.words(errno: code))")
      }
      number += 1
    }
    guard rename(temporary, path) == 0 else {
      let code = errno
      _ = systemClose(descriptor)  // before the unlink, as above
      unlink(temporary)
      unlink(kept)  // the name this opener made; the old file is still at the path
      throw FileFailure(path: path, errno: code)
    }
    return (descriptor, kept)
  }

  /// Whether `link` failed with `code` because the file system has no hard links (FAT, exFAT:
  /// memory cards, USB sticks), or will not make one to that file (Linux's protected hard links:
  /// a file of another user in a folder everyone may write).
  private static func cannotLink(_ code: Int32) -> Bool {
    code == EPERM || code == EOPNOTSUPP || code == ENOTSUP
  }

  /// With the file at `path` locked, on a file system without hard links: renames it to the
  /// first free `PATH.N` (a name reserved first by an empty file of this opener's, which the
  /// rename replaces, so that no other file is ever replaced), then makes the new file at the
  /// free path. Another opener that finds the path free in between and takes it wins: this one
  /// is refused, and the old file stays kept.
  private static func replaceWithoutLinks(at path: String, permissions: mode_t?) throws(FileFailure) -> (
    Int32, String?
  ) {
    var number = 1
    var kept: String
    var reserved: FileIdentity?
    while true {
      kept = "\(path).\(number)"
      let placeholder = open(kept, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0o600)
      if placeholder >= 0 {
        reserved = FileIdentity(descriptor: placeholder)
        _ = systemClose(placeholder)
        break
      }
      let code = errno
      guard code == EEXIST, number < 1_000_000 else {
        throw FileFailure(
          path: path, cause: "the file there cannot be kept beside it as \(kept): \(FileCause.words(errno: code))")
      }
      number += 1
    }
    guard rename(path, kept) == 0 else {
      let code = errno
      if let reserved, FileIdentity(linkAt: kept) == reserved { unlink(kept) }  // the empty file this opener made
      throw FileFailure(
        path: path, cause: "the file there cannot be kept beside it as \(kept): \(FileCause.words(errno: code))")
    }
    guard let descriptor = try createLocked(at: path, permissions: permissions) else {
      throw FileFailure(path: path, cause: refusal)
    }
    return (descriptor, kept)
  }

  /// Makes the new file at the free `path` itself, then locks it: for a file system without hard
  /// links, where it cannot appear there locked. `nil` when the path was taken meanwhile, or
  /// when another opener locked the new file first (and moves it aside, empty, as the file it
  /// found there), or moved it before it was locked.
  private static func createLocked(at path: String, permissions: mode_t?) throws(FileFailure) -> Int32? {
    let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else {
      let code = errno
      if code == EEXIST { return nil }
      throw FileFailure(path: path, errno: code)
    }
    if let permissions { _ = fchmod(descriptor, permissions) }  // a failure leaves the usual ones
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      if code == EINTR { continue }
      _ = systemClose(descriptor)
      if code == EWOULDBLOCK { return nil }
      throw FileFailure(path: path, cause: "the file cannot be locked: \(FileCause.words(errno: code))")
    }
    guard isAtPath(descriptor, path) else {
      _ = systemClose(descriptor)
      return nil
    }
    return descriptor
  }

  /// A new, empty, locked file beside `path`, for appending, under a temporary name.
  private static func makeLocked(beside path: String, permissions: mode_t?) throws(FileFailure) -> (String, Int32) {
    var attempt = 0
    while true {
      let candidate = "\(path).opening-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
      let descriptor = open(candidate, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
      if descriptor >= 0 {
        if let permissions { _ = fchmod(descriptor, permissions) }  // a failure leaves the usual ones
        // Nobody else knows the name yet: the lock is free.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
          let code = errno
          _ = systemClose(descriptor)
          unlink(candidate)
          throw FileFailure(path: path, cause: "the file cannot be locked: \(FileCause.words(errno: code))")
        }
        return (candidate, descriptor)
      }
      let code = errno
      attempt += 1
      guard code == EEXIST, attempt < 16 else { throw FileFailure(path: path, errno: code) }
    }
  }

  /// Writes the folder of `url` to the disk: the new file's name, and the kept one's, survive a
  /// power loss. A folder that cannot be synced leaves them in place all the same.
  private static func syncFolder(of url: URL) {
    let folder = open(url.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
    guard folder >= 0 else { return }
    _ = fsync(folder)
    _ = systemClose(folder)
  }

  /// Whether `path` names the file open as `descriptor`.
  private static func isAtPath(_ descriptor: Int32, _ path: String) -> Bool {
    guard let open = FileIdentity(descriptor: descriptor) else { return false }
    return FileIdentity(path: path) == open
  }

  /// What the symbolic link at `path` points to.
  private static func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

/// A file's device and inode: which file a name or a descriptor is, whatever its name.
package struct FileIdentity: Equatable, Sendable {
  let device: UInt64
  let inode: UInt64

  init(_ status: stat) {
    device = UInt64(truncatingIfNeeded: status.st_dev)
    inode = UInt64(truncatingIfNeeded: status.st_ino)
  }

  /// The file open as `descriptor`.
  init?(descriptor: Int32) {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    self.init(status)
  }

  /// The file `path` names, through symbolic links.
  init?(path: String) {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    self.init(status)
  }

  /// The file `path` names, or the symbolic link itself if it is one.
  package init?(linkAt path: String) {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    self.init(status)
  }
}
