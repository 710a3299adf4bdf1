import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `body` with a folder on a `tmpfs` of `bytes`, unmounted and removed when `body` returns
/// or throws. Returns `nil` without running `body` when the process is not root, the only case it
/// may not run.
func withSmallDisk<Result>(bytes: Int, _ body: (URL) throws -> Result) throws -> Result? {
  guard getuid() == 0 else {
    print("skipped: mounting a tmpfs needs root")
    return nil
  }
  #if os(Linux)
    return try withTmpfs(bytes: bytes, body)
  #else
    print("skipped: a tmpfs is mounted on Linux only")
    return nil
  #endif
}

#if os(Linux)
  private func withTmpfs<Result>(bytes: Int, _ body: (URL) throws -> Result) throws -> Result? {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("small-disk-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    guard mount("tmpfs", folder.path, "tmpfs", 0, "size=\(bytes)") == 0 else {
      throw SmallDiskError(message: "cannot mount a tmpfs on \(folder.path): \(String(cString: strerror(errno)))")
    }
    defer { umount2(folder.path, Int32(MNT_DETACH)) }
    return try body(folder)
  }
#endif

struct SmallDiskError: Error {
  let message: String
}
