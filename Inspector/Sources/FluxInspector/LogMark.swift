/// Where a reader of the log stands: which file, how many bytes of whole lines it has read, how
/// many lines that is, and the bytes around (the first ones of the file, and the last ones
/// before the offset), to tell the same file grown from a file written over.
///
/// A log that grows is only appended to: what was read stays as it was. A file copied over the
/// log (`cp other.jsonl session.jsonl` keeps the inode), a log started again at its path, or
/// another file renamed into its place changes the inode, shortens the file, or changes the
/// bytes at its start or before the offset; a reader that finds any of these reads the log again
/// from its start.
struct LogMark: Sendable, Equatable {
  /// How many bytes at the start, and before the offset, are compared.
  static let window = 4096

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

  /// The mark of `offset`, the end of `lines` lines of `file`, open as `descriptor`: `nil` when
  /// the file is shorter, or `offset` is not where a line starts.
  init?(at offset: Int, lines: Int, in file: LogFile.Identity, descriptor: Int32) {
    guard offset <= file.size,
      let head = LogFile.bytes(of: descriptor, in: 0..<min(offset, Self.window)),
      let tail = LogFile.bytes(of: descriptor, in: max(0, offset - Self.window)..<offset),
      tail.last.map({ $0 == UInt8(ascii: "\n") }) ?? true
    else { return nil }
    self.init(device: file.device, inode: file.inode, offset: offset, lines: lines, head: head, tail: tail)
  }

  /// The mark after `bytes`, which follow the offset in the file and hold `lineCount` lines.
  func advanced(over bytes: ArraySlice<UInt8>, lines lineCount: Int) -> LogMark {
    let missing = max(0, Self.window - head.count)
    return LogMark(
      device: device, inode: inode, offset: offset + bytes.count, lines: lines + lineCount,
      head: head + bytes.prefix(missing), tail: Array((tail + bytes).suffix(Self.window)))
  }

  /// The mark after `bytes`, which follow the offset in the file and hold `lineCount` lines:
  /// only the bytes the mark keeps are copied.
  func advanced(over bytes: UnsafeBufferPointer<UInt8>, lines lineCount: Int) -> LogMark {
    let missing = max(0, Self.window - head.count)
    let last =
      bytes.count >= Self.window
      ? Array(bytes[(bytes.count - Self.window)...]) : Array((tail + bytes).suffix(Self.window))
    return LogMark(
      device: device, inode: inode, offset: offset + bytes.count, lines: lines + lineCount,
      head: head + bytes.prefix(missing), tail: last)
  }

  /// Whether `file`, open as `descriptor`, is the file of this mark, at least as long, with the
  /// same bytes at its start and before the offset.
  func isSame(as file: LogFile.Identity, descriptor: Int32) -> Bool {
    guard file.device == device, file.inode == inode, file.size >= offset else { return false }
    return LogFile.bytes(of: descriptor, in: 0..<head.count) == head
      && LogFile.bytes(of: descriptor, in: (offset - tail.count)..<offset) == tail
  }
}
