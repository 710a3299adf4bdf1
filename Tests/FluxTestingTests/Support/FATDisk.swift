import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `body` with a folder on a FAT file system of `bytes` (made by `mkfs.vfat`, mounted by
/// `fusefat`): a file system without hard links, as on a memory card or a USB stick. Unmounted
/// and removed when `body` returns or throws. Returns `nil` without running `body` when the
/// process is not root or the tools are missing (`.ci/run` installs them).
func withFATDisk<Result>(bytes: Int, _ body: (URL) throws -> Result) throws -> Result? {
  #if os(Linux)
    let tools = ["/usr/sbin/mkfs.vfat", "/usr/bin/fusefat"]
    guard getuid() == 0, FileManager.default.fileExists(atPath: "/dev/fuse"),
      tools.allSatisfy(FileManager.default.isExecutableFile(atPath:))
    else {
      print("skipped: a FAT file system needs root, /dev/fuse, mkfs.vfat and fusefat")
      return nil
    }
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("fat-disk-\(UUID())")
    let image = base.appendingPathComponent("disk.img")
    let folder = base.appendingPathComponent("mounted")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: base) }
    guard FileManager.default.createFile(atPath: image.path, contents: nil),
      truncate(image.path, off_t(bytes)) == 0
    else { throw SmallDiskError(message: "cannot make the image \(image.path)") }
    try run(tools[0], ["-n", "FLUXTEST", image.path])
    try run(tools[1], ["-o", "rw+", image.path, folder.path])
    defer { umount2(folder.path, Int32(MNT_DETACH)) }
    return try body(folder)
  #else
    print("skipped: a FAT file system is mounted on Linux only")
    return nil
  #endif
}

#if os(Linux)
  /// Runs `tool` and waits for it, by `posix_spawn` and `waitpid`: `fusefat` leaves a daemon
  /// behind that `Process` may wait for forever.
  private func run(_ tool: String, _ arguments: [String]) throws {
    let argv = ([tool] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor: Int32 in [1, 2] { posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0) }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, tool, &actions, nil, argv, environ)
    guard spawned == 0 else {
      throw SmallDiskError(message: "cannot run \(tool): \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { throw SmallDiskError(message: "cannot wait for \(tool)") }
    }
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
      throw SmallDiskError(message: "\(tool) \(arguments.joined(separator: " ")) ended with status \(status)")
    }
  }
#endif
