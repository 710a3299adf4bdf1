import FluxCore
import FluxDevtools
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A log lives at its own path (rule 17): appended there as it grows, what was there kept
/// beside it, one writer at a time.
@Suite("An action log at its own path")
struct ActionLogPathTests {
  /// A new, empty folder, removed when `body` returns.
  private func withFolder<Result>(_ name: String, _ body: (URL) throws -> Result) throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
  }

  private func names(in folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
  }

  private static let refused = "another action log is writing to it (in this process or another); only one may"

  @Test("rule 17: every line is at the path after flush(), before finish(), and each write is one whole line")
  func inv17_linesAreAtThePathAfterFlush() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-flush-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("session.jsonl")
    let log = ActionLog(output: try .file(url))
    let store = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .queue(DispatchQueue(label: "flush")),
      middlewares: [log.middleware(label: "c")])
    for amount in 1...3 {
      await store.actions.dispatchAndWait(action: .add(amount))
      log.flush()
      // Not finished: what a reader sees while the app runs.
      let actions = try Recording(contentsOf: url).entries.map { try $0.action(as: CounterAction.self) }
      #expect(actions == (1...amount).map { .add($0) })
    }
    #expect(try names(in: folder) == ["session.jsonl"])
    try log.finish()
    withExtendedLifetime(store) {}
  }

  @Test("rule 17: a log dropped without finish() leaves its lines at its path")
  func inv17_logWithoutFinishLeavesItsLines() throws {
    try withFolder("log-no-finish") { folder in
      let url = folder.appendingPathComponent("session.jsonl")
      // As the article's record(): no flush, no finish.
      do {
        let log = ActionLog(output: try .file(url))
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "counter")])
        store.actions.dispatch(action: .add(2))
      }
      let entries = try Recording(contentsOf: url).entries
      #expect(try entries.map { try $0.action(as: CounterAction.self) } == [.add(2)])
      // And the file is free again: a new log opens it, keeping this one beside it.
      let next = try ActionLogOutput.file(url)
      #expect(next.previousFile?.lastPathComponent == "session.jsonl.1")
      try next.finish()
    }
  }

  @Test("rule 17: what was at the path is kept under the first free number, and nothing else is touched")
  func inv17_previousFileIsKeptUnderTheFirstFreeNumber() throws {
    try withFolder("log-keep") { folder in
      let url = folder.appendingPathComponent("s.jsonl")
      try Data("old\n".utf8).write(to: url)
      try Data("older\n".utf8).write(to: folder.appendingPathComponent("s.jsonl.1"))
      try FileManager.default.createDirectory(
        at: folder.appendingPathComponent("s.jsonl.2"), withIntermediateDirectories: false)
      try FileManager.default.createSymbolicLink(
        atPath: folder.appendingPathComponent("s.jsonl.3").path, withDestinationPath: "nowhere")
      let output = try ActionLogOutput.file(url)
      #expect(output.previousFile?.lastPathComponent == "s.jsonl.4")
      output.write("{}\n")
      try output.finish()
      #expect(FileManager.default.contents(atPath: url.path + ".4") == Data("old\n".utf8))
      #expect(FileManager.default.contents(atPath: url.path + ".1") == Data("older\n".utf8))
      #expect(FileManager.default.contents(atPath: url.path) == Data("{}\n".utf8))
      #expect(try names(in: folder) == ["s.jsonl", "s.jsonl.1", "s.jsonl.2", "s.jsonl.3", "s.jsonl.4"])
      // No file before: nothing is kept.
      let fresh = try ActionLogOutput.file(folder.appendingPathComponent("t.jsonl"))
      #expect(fresh.previousFile == nil)
      try fresh.finish()
    }
  }

  @Test("rule 17: a second writer on the path, in this process, is refused when it opens, and moves nothing")
  func inv17_secondWriterIsRefused() throws {
    try withFolder("log-second") { folder in
      let url = folder.appendingPathComponent("s.jsonl")
      try Data("old\n".utf8).write(to: url)
      let first = try ActionLogOutput.file(url)
      first.write("{\"first\":1}\n")
      let error = #expect(throws: ActionLogOutput.FileError.self) { try ActionLogOutput.file(url) }
      #expect(error?.description == "cannot write \(url.path): \(Self.refused)")
      #expect(try names(in: folder) == ["s.jsonl", "s.jsonl.1"])
      first.write("{\"first\":2}\n")
      try first.finish()
      #expect(FileManager.default.contents(atPath: url.path) == Data("{\"first\":1}\n{\"first\":2}\n".utf8))
      #expect(FileManager.default.contents(atPath: url.path + ".1") == Data("old\n".utf8))
      // Once the first is finished, the path is free.
      let second = try ActionLogOutput.file(url)
      #expect(second.previousFile?.lastPathComponent == "s.jsonl.2")
      second.discard()
      #expect(FileManager.default.contents(atPath: url.path) == Data("{\"first\":1}\n{\"first\":2}\n".utf8))
    }
  }

  @Test("rule 17: openers racing for one path: one wins, the others are refused, and the old file is kept once")
  func inv17_openersRacing() throws {
    for round in 0..<100 {
      try withFolder("log-race") { folder in
        let url = folder.appendingPathComponent("s.jsonl")
        let hasOld = round % 2 == 0
        if hasOld { try Data("old\n".utf8).write(to: url) }
        let outcomes = Collected<Result<ActionLogOutput, ActionLogOutput.FileError>>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
          outcomes.add(Result { () throws(ActionLogOutput.FileError) in try ActionLogOutput.file(url) })
        }
        let winners = outcomes.all.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        let causes = outcomes.all.compactMap { outcome -> String? in
          guard case .failure(let error) = outcome else { return nil }
          return error.cause
        }
        #expect(causes == [Self.refused, Self.refused, Self.refused])
        #expect(try names(in: folder) == (hasOld ? ["s.jsonl", "s.jsonl.1"] : ["s.jsonl"]))
        if hasOld { #expect(FileManager.default.contents(atPath: url.path + ".1") == Data("old\n".utf8)) }
        for winner in winners { try winner.finish() }
      }
    }
  }

  @Test("rule 17: finish() from several threads at once: none returns before the file is closed, all with one outcome")
  func inv17_finishFromSeveralThreads() throws {
    for _ in 0..<100 {
      try withFolder("log-finish") { folder in
        let url = folder.appendingPathComponent("s.jsonl")
        let log = ActionLog(output: try .file(url))
        let store = Store<CounterState>(
          state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
        for amount in 1...20 { store.actions.dispatch(action: .add(amount)) }
        let seen = Collected<(finished: Bool, open: Bool, lines: Int?)>()
        let probing = NSLock()  // one probe at a time: a probe's read opens the file too
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
          let finished = (try? log.finish()) != nil
          // Returned: the file is closed, and every line is in it.
          probing.withLock {
            seen.add((finished, Self.isOpenHere(url), try? Recording(contentsOf: url).entries.count))
          }
        }
        #expect(seen.all.map(\.finished) == [true, true, true, true])
        #expect(seen.all.map(\.open) == [false, false, false, false])
        #expect(seen.all.map(\.lines) == [20, 20, 20, 20])
        withExtendedLifetime(store) {}
      }
    }
  }

  @Test("rule 17: a folder put at the path while the log runs: no line is lost, and finish says the file was moved")
  func inv17_folderAtThePathWhileLogging() throws {
    try withFolder("log-moved") { folder in
      let url = folder.appendingPathComponent("s.jsonl")
      let moved = folder.appendingPathComponent("moved.jsonl")
      let log = ActionLog(output: try .file(url))
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [log.middleware(label: "c")])
      for amount in 1...500 { store.actions.dispatch(action: .add(amount)) }
      try FileManager.default.moveItem(at: url, to: moved)
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
      for amount in 501...1_000 { store.actions.dispatch(action: .add(amount)) }
      let error = #expect(throws: ActionLogOutput.FileError.self) { try log.finish() }
      #expect(
        error?.description
          == "cannot write \(url.path): another program moved or removed the file while the log was written to it")
      #expect(try Recording(contentsOf: moved).entries.count == 1_000)
      var isFolder: ObjCBool = false
      #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && isFolder.boolValue)
      // And a new log there is refused, the folder left as it is.
      let refused = #expect(throws: ActionLogOutput.FileError.self) { try ActionLogOutput.file(url) }
      #expect(refused?.cause == "is a folder")
      withExtendedLifetime(store) {}
    }
  }

  @Test("rule 17: a symbolic link at the path to nothing is refused, and to a file is kept beside")
  func inv17_symbolicLinkAtThePath() throws {
    try withFolder("log-link") { folder in
      let url = folder.appendingPathComponent("s.jsonl")
      try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "gone.jsonl")
      let error = #expect(throws: ActionLogOutput.FileError.self) { try ActionLogOutput.file(url) }
      #expect(error?.cause == "is a symbolic link to gone.jsonl, which does not exist")
      try Data("target\n".utf8).write(to: folder.appendingPathComponent("gone.jsonl"))
      let output = try ActionLogOutput.file(url)
      output.write("{}\n")
      try output.finish()
      #expect(FileManager.default.contents(atPath: url.path) == Data("{}\n".utf8))
      #expect(
        FileManager.default.contents(atPath: folder.appendingPathComponent("gone.jsonl").path) == Data("target\n".utf8))
      #expect(FileManager.default.contents(atPath: url.path + ".1") == Data("target\n".utf8))
    }
  }

  @Test("rule 17: a session that replays a log and records to the same file loses nothing")
  func inv17_replayAndRecordToOneFile() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-replay-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("s.jsonl")
    let first = ActionLog(output: try .file(url))
    let recorded = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [first.middleware(label: "c")])
    for amount in 1...5 { recorded.actions.dispatch(action: .add(amount)) }
    try first.finish()
    let old = try #require(FileManager.default.contents(atPath: url.path))
    // The second session reads the log, then records to the same file while it replays it.
    let recording = try Recording(contentsOf: url)
    let second = ActionLog(output: try .file(url))
    let replayed = Store<CounterState>(
      state: .init(), mutations: .init(), executor: .immediate, middlewares: [second.middleware(label: "c")])
    let replay = Replay(recording)
    replay.route("c", to: replayed.actions)
    #expect(try await replay.run() == 5)
    replayed.actions.dispatch(action: .add(6))
    try second.finish()
    #expect(FileManager.default.contents(atPath: url.path + ".1") == old)
    let actions = try Recording(contentsOf: url).entries.map { try $0.action(as: CounterAction.self) }
    #expect(actions == (1...6).map { .add($0) })
    withExtendedLifetime((recorded, replayed)) {}
  }

  /// Whether this process has the file at `url` open. Through `/proc` on Linux: a process
  /// forked meanwhile (a test that runs a program) holds a copy of every descriptor, and of the
  /// file's lock, until it executes the program; elsewhere, through the lock.
  static func isOpenHere(_ url: URL) -> Bool {
    #if os(Linux)
      let path = url.resolvingSymlinksInPath().path
      let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
      return descriptors.contains {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path
      }
    #else
      return isHeld(url)
    #endif
  }

  /// Whether a writer holds the file at `url`: its exclusive lock keeps a shared one out.
  static func isHeld(_ url: URL) -> Bool {
    let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return true }
    flock(descriptor, LOCK_UN)
    return false
  }
}

/// What several threads got, in the order they got it.
private final class Collected<Element>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var elements: [Element] = []

  func add(_ element: Element) {
    lock.withLock { elements.append(element) }
  }

  var all: [Element] { lock.withLock { elements } }
}
