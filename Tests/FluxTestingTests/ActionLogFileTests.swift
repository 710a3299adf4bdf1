import FluxCore
import FluxDevtools
import Foundation
import Testing

/// The file output of an action log, and reading back what it wrote, under real faults.
@Suite("An action log's file")
struct ActionLogFileTests {
  /// Which failures `onFailure` received, in order.
  final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var failures: [ActionLogOutput.FileError] = []

    func append(_ failure: ActionLogOutput.FileError) { lock.withLock { failures.append(failure) } }
    var all: [ActionLogOutput.FileError] { lock.withLock { failures } }
  }

  @Test(
    "rule 17: a write that fills the disk is reported once, every finish throws it, the old file is kept beside, and every whole line is at the path"
  )
  func inv17_fullDiskIsReported() throws {
    try withSmallDisk(bytes: 16_384) { disk in
      let url = disk.appendingPathComponent("session.jsonl")
      let old = Data("the old log\n".utf8)
      try old.write(to: url)
      let failures = Failures()
      let output = try ActionLogOutput.file(url) { failures.append($0) }
      let log = ActionLog(output: output)
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
      for amount in 1...1_000 { store.actions.dispatch(action: .add(amount)) }
      log.flush()
      let failure = try #require(failures.all.first)
      #expect(failures.all.count == 1)
      #expect(output.failure == failure)
      #expect(failure.cause == "the disk is full")
      #expect(failure.path == url.path)
      #expect(failure.description == "cannot write \(url.path): the disk is full")
      #expect(throws: failure) { try log.finish() }
      #expect(throws: failure) { try log.finish() }  // the same outcome, every time
      #expect(output.previousFile?.path == url.path + ".1")
      #expect(FileManager.default.contents(atPath: url.path + ".1") == old)
      // Every line before the failure is at the path, whole, in order: the part of the line
      // that did not fit is removed.
      let recording = try Recording(contentsOf: url)
      #expect(recording.cutShortLine == nil)
      let actions = try recording.entries.map { try $0.action(as: CounterAction.self) }
      #expect(actions == (1...actions.count).map { .add($0) })
      #expect(actions.count > 10)
      withExtendedLifetime(store) {}
    }
  }

  @Test("stores on several threads log to one file; every line is in the file once it is finished")
  func severalThreads() throws {
    for _ in 0..<20 {
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-threads-\(UUID())")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      let url = folder.appendingPathComponent("session.jsonl")
      let output = try ActionLogOutput.file(url)
      let log = ActionLog(output: output)
      DispatchQueue.concurrentPerform(iterations: 4) { thread in
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "\(thread)")])
        for amount in 1...50 {
          store.actions.dispatch(action: .add(amount))
          _ = output.failure
        }
      }
      try log.finish()
      let recording = try Recording(contentsOf: url)
      #expect(recording.entries.count == 200)
      for thread in 0..<4 {
        let actions = try recording.entries.filter { $0.store == "\(thread)" }.map {
          try $0.action(as: CounterAction.self)
        }
        #expect(actions == (1...50).map { .add($0) })
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["session.jsonl"])
    }
  }

  @Test("a folder at the URL, or a folder that does not exist, is an error in words, and nothing is made")
  func inv17_fileOutputThatCannotBeMade() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-folder-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let inTheWay = #expect(throws: ActionLogOutput.FileError.self) { try ActionLogOutput.file(folder) }
    #expect(inTheWay?.description == "cannot write \(folder.path): is a folder")
    let nowhere = folder.appendingPathComponent("nowhere/session.jsonl")
    let missing = #expect(throws: ActionLogOutput.FileError.self) { try ActionLogOutput.file(nowhere) }
    #expect(missing?.cause == "the folder \(folder.path)/nowhere does not exist")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
  }

  @Test("discard removes the new file and puts the old one back at the path; a line after it is reported")
  func discard() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-discard-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("session.jsonl")
    try Data("old\n".utf8).write(to: url)
    let failures = Failures()
    let output = try ActionLogOutput.file(url) { failures.append($0) }
    output.write("{}\n")
    output.discard()
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["session.jsonl"])
    #expect(FileManager.default.contents(atPath: url.path) == Data("old\n".utf8))
    output.write("{}\n")
    #expect(failures.all.map(\.cause) == ["a line came after the log was finished; it is not written"])
  }

  @Test("a recording read allowing a cut-short last line reads every whole line before it")
  func allowingCutShortLastLine() throws {
    let whole = #"{"action":{"add":{"_0":1}},"outcome":"committed","store":"c","time":"2026-11-23T03:07:49.123Z"}"#
    let text = whole + "\n" + whole + "\n" + whole.prefix(30)
    #expect(throws: RecordingError.self) { try Recording(jsonLines: text) }
    let recording = try Recording(jsonLines: text, allowingCutShortLastLine: true)
    #expect(recording.entries.count == 2)
    #expect(recording.cutShortLine == 3)
    #expect(try Recording(jsonLines: whole + "\n", allowingCutShortLastLine: true).cutShortLine == nil)
    // A bad line that is not the last, or a last line that is whole but wrong, is still an error.
    #expect(throws: RecordingError.self) {
      try Recording(jsonLines: String(whole.prefix(30)) + "\n" + whole, allowingCutShortLastLine: true)
    }
  }

  @Test("a line whose action holds bytes that are not UTF-8 is refused when read, naming the byte")
  func actionThatIsNotUTF8() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("log-bytes-\(UUID()).jsonl")
    defer { try? FileManager.default.removeItem(at: url) }
    var line = Data(#"{"action":{"named":{"_0":""#.utf8)
    line.append(contentsOf: [0x61, 0xC3, 0x28])
    line.append(contentsOf: Data(#""}},"outcome":"committed","store":"c","time":"2026-11-23T03:07:49.123Z"}"#.utf8))
    try (line + Data("\n".utf8)).write(to: url)
    let error = #expect(throws: RecordingError.self) { try Recording(contentsOf: url) }
    #expect(error?.description == "line 1: the line is not UTF-8 at byte 28")
  }

  @Test("an action of no case of its enum names the case and the enum")
  func noCase() throws {
    let line = #"{"action":{"explode":{"_0":1}},"outcome":"committed","store":"c","time":"2026-11-23T03:07:49.123Z"}"#
    let entry = try #require(try Recording(jsonLines: line).entries.first)
    let error = #expect(throws: RecordingError.self) { try entry.action(as: CounterAction.self) }
    #expect(error?.description == "line 1: the action is not a CounterAction (no case `explode` in CounterAction)")
  }

  @Test("one function says the cause of a file error in words, whoever reported it")
  func causeInWords() {
    #expect(FileCause.words(errno: ENOSPC) == "the disk is full")
    #expect(FileCause.words(errno: EISDIR) == "is a folder")
    #expect(FileCause.words(POSIXError(.EACCES)) == "permission denied")
    #expect(FileCause.words(CocoaError(.fileReadNoSuchFile)) == "does not exist")
    let underlying = NSError(domain: NSPOSIXErrorDomain, code: Int(EROFS))
    #expect(
      FileCause.words(NSError(domain: NSCocoaErrorDomain, code: 512, userInfo: [NSUnderlyingErrorKey: underlying]))
        == "the file system is read-only")
    #expect(!FileCause.words(CocoaError(.fileWriteUnknown)).contains("NSCocoaErrorDomain"))
  }

  @Test("a file that cannot be read names the path and the cause in words")
  func unreadable() {
    for (path, cause) in [("/proc/nope", "does not exist"), ("/tmp", "is a folder")] {
      let error = #expect(throws: RecordingError.self) { try Recording(contentsOf: URL(fileURLWithPath: path)) }
      #expect(error?.description == "cannot read \(path): \(cause)")
    }
  }
}
