import Foundation

/// What this session knows of the `todo.md` files it loaded, saved, or could not read, kept by
/// the file's identity (its device and inode), never by the spelling of its path.
///
/// `save` replaces a file unasked only when what it holds is what this session last loaded from
/// it or saved to it: never a file it could not read, one it never read (a folder's notes, the
/// lists after a replay, which loads nothing), or one that changed since (another session saved
/// it).
struct KnownFiles {
  /// The content of each file as this session last loaded or saved it.
  private var contents: [FileIdentity: Fingerprint] = [:]
  /// The files a load could not read, and why.
  private var unreadable: [FileIdentity: String] = [:]

  /// Whether some file could not be read.
  var hasUnreadableFiles: Bool { !unreadable.isEmpty }

  /// The file `identity` holds `content`, as this session loaded or saved it.
  mutating func remember(_ identity: FileIdentity, holds content: Fingerprint) {
    contents[identity] = content
    unreadable[identity] = nil
  }

  /// The file `identity` could not be read, for `cause`.
  mutating func remember(_ identity: FileIdentity, couldNotBeRead cause: String) {
    unreadable[identity] = cause
  }

  /// Why `save` may not replace the file at `path` (links followed), in words; `nil` when it
  /// may: nothing is there, or what is there is what this session last loaded from it or saved
  /// to it. A folder in the way is left for the save to report.
  func whyNotReplace(_ path: String) -> String? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    if let cause = unreadable[FileIdentity(status)] { return "it could not be read (\(cause))" }
    if status.st_mode & S_IFMT == S_IFDIR { return nil }
    let current: (identity: FileIdentity, bytes: [UInt8])
    do {
      current = try TodoFiles.read(path)
    } catch {
      return "it cannot be read (\(error.cause))"
    }
    guard let known = contents[current.identity] else { return "this session has not loaded it" }
    return known == Fingerprint(current.bytes) ? nil : "it changed since this session loaded or saved it"
  }
}
