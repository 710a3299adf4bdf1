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

/// A file written whole, as the aside file of a replacement (the `--html` page, the
/// `--swift-test` file) before it is renamed into place.
enum NewFile {
  /// Writes `bytes` to a new file at `path`, with `permissions`, and to the disk, or says why not.
  static func write(_ bytes: [UInt8], to path: String, permissions: mode_t) throws(InspectorError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw InspectorError(LogFile.describe(errno)) }
    // Exactly these permissions, whatever the process's umask takes away from new files.
    guard fchmod(descriptor, permissions) == 0 else {
      let cause = LogFile.describe(errno)
      close(descriptor)
      throw InspectorError(cause)
    }
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
}
