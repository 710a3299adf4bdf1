/// Which file the page read the log from, as the page keeps it: `DEVICE-INODE-HASH`, the same
/// while the file grows, another for another file at the log's path.
///
/// The device and inode tell a file renamed into the log's place; the hash of the log's first
/// line (at most its first 4 KB) tells a log started again in a file that got the same inode, or
/// another session copied over the log. Every document of the log carries it (`identity`), the
/// page gives it back when it follows the log (`/events?…&identity=`), and the server follows
/// only that file: a page that comes back after the log changed, to this server or to one
/// started again, is told to load the log anew, never given lines from an offset in another
/// file.
struct LogIdentity: Equatable, Sendable {
  /// How many bytes of the first line are hashed at most.
  static let hashedBytes = 4096

  let device: UInt64
  let inode: UInt64
  let hash: UInt64

  /// The identity of `file`, open as `descriptor`: `nil` when its start cannot be read.
  init?(of file: LogFile.Identity, descriptor: Int32) {
    guard let start = LogFile.bytes(of: descriptor, in: 0..<min(file.size, Self.hashedBytes)) else { return nil }
    device = file.device
    inode = file.inode
    hash = Self.hash(start.prefix { $0 != UInt8(ascii: "\n") })
  }

  /// This identity with `generation` mixed into its hash: that of a long log's index started
  /// again `generation` times for a file written over in place, its first line kept, whose rows
  /// a page holds of what was there before (see ``LogCache``). The same identity for 0.
  func generation(_ generation: UInt64) -> LogIdentity {
    guard generation > 0 else { return self }
    var bytes = withUnsafeBytes(of: generation.littleEndian) { Array($0) }
    bytes += withUnsafeBytes(of: hash.littleEndian) { Array($0) }
    return LogIdentity(device: device, inode: inode, hash: Self.hash(bytes))
  }

  private init(device: UInt64, inode: UInt64, hash: UInt64) {
    self.device = device
    self.inode = inode
    self.hash = hash
  }

  /// Reads an identity as the page gave it back, or returns `nil` when it is not three numbers
  /// in range joined by `-`: no number from a request can trap.
  init?(_ text: Substring) {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, let device = decimal(parts[0]), let inode = decimal(parts[1]),
      parts[2].utf8.count == 16, parts[2].utf8.allSatisfy(\.isHexDigit), let hash = UInt64(parts[2], radix: 16)
    else { return nil }
    self.device = device
    self.inode = inode
    self.hash = hash
  }

  /// The identity as the page keeps it.
  var text: String {
    let digits = String(hash, radix: 16)
    return "\(device)-\(inode)-" + String(repeating: "0", count: 16 - digits.count) + digits
  }

  /// FNV-1a, 64 bits: enough to tell two logs apart, not a defence against a forger (whoever
  /// can write the log can show anything in it anyway).
  private static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return value
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}

/// `text` as a number when it is only decimal digits, at most 19 of them, with no sign: `nil`
/// for anything else, so that no number from a request can trap or wrap.
func decimal(_ text: Substring) -> UInt64? {
  guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
  return UInt64(text)
}
