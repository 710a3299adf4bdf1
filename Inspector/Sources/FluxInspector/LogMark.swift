/// Where a reader of the log stands: which file, how many bytes of whole lines it has read, how
/// many lines that is, and the bytes around (the first ones of the file, and the last ones
/// before the offset), to tell the same file grown from a file written over.
///
/// A log that grows is only appended to: what was read stays as it was. A file copied over the
/// log (`cp other.jsonl session.jsonl` keeps the inode), a log started again at its path, or
/// another file renamed into its place changes the inode, shortens the file, or changes the
/// bytes at its start or before the offset; a reader that finds any of these reads the log again
/// from its start.
///
/// The page is given the mark of each offset as a ``token``, and gives it back when it follows
/// the log from there, so that a server started again after the log changed does not go on from
/// an offset in another file.
struct LogMark: Sendable, Equatable {
  /// How many bytes at the start, and before the offset, are compared.
  static let window = 4096
  /// The largest offset or line count read from a request: more than any log holds, and
  /// exact in the page's numbers (2^53 − 1).
  static let largestNumber = 9_007_199_254_740_991

  /// The device and inode of the file.
  let device: UInt64
  let inode: UInt64
  /// The bytes read: whole lines, up to and including a line break.
  let offset: Int
  /// The lines that those bytes hold.
  let lines: Int
  /// The first `min(offset, window)` bytes of the file.
  let head: [UInt8]
  /// The last `min(offset, window)` bytes before `offset`.
  let tail: [UInt8]

  /// The mark of nothing read yet in `file`.
  init(start file: LogFile.Identity) {
    device = file.device
    inode = file.inode
    offset = 0
    lines = 0
    head = []
    tail = []
  }

  private init(device: UInt64, inode: UInt64, offset: Int, lines: Int, head: [UInt8], tail: [UInt8]) {
    self.device = device
    self.inode = inode
    self.offset = offset
    self.lines = lines
    self.head = head
    self.tail = tail
  }

  /// The mark after `bytes`, which follow the offset in the file and hold `lineCount` lines.
  func advanced(over bytes: ArraySlice<UInt8>, lines lineCount: Int) -> LogMark {
    let missing = max(0, Self.window - head.count)
    return LogMark(
      device: device, inode: inode, offset: offset + bytes.count, lines: lines + lineCount,
      head: head + bytes.prefix(missing), tail: Array((tail + bytes).suffix(Self.window)))
  }

  /// Whether `file`, open as `descriptor`, is the file of this mark, at least as long, with the
  /// same bytes at its start and before the offset.
  func isSame(as file: LogFile.Identity, descriptor: Int32) -> Bool {
    guard file.device == device, file.inode == inode, file.size >= offset else { return false }
    return LogFile.bytes(of: descriptor, in: 0..<head.count) == head
      && LogFile.bytes(of: descriptor, in: (offset - tail.count)..<offset) == tail
  }

  /// The mark as the page keeps it: `DEVICE-INODE-OFFSET-LINES-HEAD-TAIL`, the last two a
  /// hash of those bytes in 16 hexadecimal digits each.
  var token: String {
    "\(device)-\(inode)-\(offset)-\(lines)-\(Self.hex(Self.hash(head)))-\(Self.hex(Self.hash(tail)))"
  }

  /// The mark that `token` names, read again from `file`: `nil` when the file is another one, is
  /// shorter, or has other bytes there.
  static func find(_ token: Token, in file: LogFile.Identity, descriptor: Int32) -> LogMark? {
    guard file.device == token.device, file.inode == token.inode, file.size >= token.offset else { return nil }
    let head = LogFile.bytes(of: descriptor, in: 0..<min(token.offset, window))
    let tail = LogFile.bytes(of: descriptor, in: max(0, token.offset - window)..<token.offset)
    guard let head, let tail, hash(head) == token.head, hash(tail) == token.tail else { return nil }
    return LogMark(
      device: file.device, inode: file.inode, offset: token.offset, lines: token.lines, head: head, tail: tail)
  }

  /// A mark as the page gave it back, its numbers checked and nothing more.
  struct Token: Equatable {
    let device: UInt64
    let inode: UInt64
    let offset: Int
    let lines: Int
    let head: UInt64
    let tail: UInt64

    /// Reads `text`, or returns `nil` when it is not six numbers in range joined by `-`.
    init?(_ text: Substring) {
      let parts = text.split(separator: "-", omittingEmptySubsequences: false)
      guard parts.count == 6,
        let device = decimal(parts[0]), let inode = decimal(parts[1]),
        let offset = decimal(parts[2]), offset <= UInt64(LogMark.largestNumber),
        let lines = decimal(parts[3]), lines <= UInt64(LogMark.largestNumber),
        parts[4].utf8.count == 16, let head = UInt64(parts[4], radix: 16),
        parts[5].utf8.count == 16, let tail = UInt64(parts[5], radix: 16)
      else { return nil }
      self.device = device
      self.inode = inode
      self.offset = Int(offset)
      self.lines = Int(lines)
      self.head = head
      self.tail = tail
    }
  }

  /// FNV-1a, 64 bits: enough to tell two logs apart, not a defence against a forger (whoever
  /// can write the log can show anything in it anyway).
  static func hash(_ bytes: [UInt8]) -> UInt64 {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return value
  }

  private static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}

/// `text` as a number when it is only decimal digits, at most 19 of them, with no sign: `nil`
/// for anything else, so that no number from a request can trap or wrap.
func decimal(_ text: Substring) -> UInt64? {
  guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
  return UInt64(text)
}
