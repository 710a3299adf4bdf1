import FluxCore
import FluxDevtools
import Foundation
import Testing

/// A log on a file system without hard links (FAT, exFAT: memory cards, USB sticks), where the
/// file that was at the path cannot be kept by a second name, nor the new one linked into place.
@Suite("An action log on a file system without hard links")
struct ActionLogNoHardLinksTests {
  private static let refused = "another action log is writing to it (in this process or another); only one may"

  /// The names in `folder`, once fusefat has let go of the files removed while open.
  ///
  /// fusefat keeps a file removed while still open under a name of its own (`.fuse_hidden…`)
  /// until it has handled the file's close, which the system sends it after `close` returns: a
  /// temporary file an opener closed and then removed may show for a moment.
  private func names(in folder: URL) throws -> [String] {
    let deadline = Date().addingTimeInterval(10)
    while true {
      let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
      guard names.contains(where: { $0.hasPrefix(".fuse_hidden") }), Date() < deadline else { return names }
      Thread.sleep(forTimeInterval: 0.002)
    }
  }

  @Test(
    "rule 17: on a FAT file system a log opens, keeps what was at its path beside it, refuses a second writer, and discard puts the old file back"
  )
  func inv17_logOnAFileSystemWithoutHardLinks() throws {
    try withFATDisk(bytes: 8 << 20) { volume in
      // A folder of its own: the volume's label shows as a file at the top.
      let disk = volume.appendingPathComponent("logs")
      try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: false)
      let url = disk.appendingPathComponent("session.jsonl")
      // Nothing at the path.
      let first = ActionLog(output: try .file(url))
      let store = Store<CounterState>(
        state: .init(), mutations: .init(), executor: .immediate, middlewares: [first.middleware(label: "c")])
      for amount in 1...3 { store.actions.dispatch(action: .add(amount)) }
      try first.finish()
      let firstLog = try #require(FileManager.default.contents(atPath: url.path))
      #expect(try Recording(contentsOf: url).entries.count == 3)
      // A log at the path: kept beside it, whole.
      let second = try ActionLogOutput.file(url)
      #expect(second.previousFile?.lastPathComponent == "session.jsonl.1")
      #expect(FileManager.default.contents(atPath: url.path + ".1") == firstLog)
      second.write("{\"second\":1}\n")
      // A second writer is refused, and moves nothing.
      let error = #expect(throws: ActionLogOutput.FileError.self) { try ActionLogOutput.file(url) }
      #expect(error?.cause == Self.refused)
      #expect(try names(in: disk) == ["session.jsonl", "session.jsonl.1"])
      try second.finish()
      #expect(FileManager.default.contents(atPath: url.path) == Data("{\"second\":1}\n".utf8))
      // Discard: the new file goes, the old one comes back to the path.
      let third = try ActionLogOutput.file(url)
      #expect(third.previousFile?.lastPathComponent == "session.jsonl.2")
      third.write("{\"third\":1}\n")
      third.discard()
      #expect(try names(in: disk) == ["session.jsonl", "session.jsonl.1"])
      #expect(FileManager.default.contents(atPath: url.path) == Data("{\"second\":1}\n".utf8))
      #expect(FileManager.default.contents(atPath: url.path + ".1") == firstLog)
      withExtendedLifetime(store) {}
    }
  }

  @Test("rule 17: openers racing for one path on a FAT file system: one wins, the others are refused, nothing is lost")
  func inv17_openersRacingWithoutHardLinks() throws {
    try withFATDisk(bytes: 8 << 20) { disk in
      for round in 0..<40 {
        let folder = disk.appendingPathComponent("r\(round)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let url = folder.appendingPathComponent("s.jsonl")
        let hasOld = round % 2 == 0
        if hasOld { try Data("old\n".utf8).write(to: url) }
        let outcomes = NoLinkOutcomes()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
          outcomes.add(Result { () throws(ActionLogOutput.FileError) in try ActionLogOutput.file(url) })
        }
        let winners = outcomes.all.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        for case .failure(let error) in outcomes.all {
          #expect(error.cause.hasPrefix(Self.refused))
        }
        let winner = try #require(winners.first)
        winner.write("{\"winner\":\(round)}\n")
        try winner.finish()
        // The winner's lines are at the path; the old file is kept once, whole; whatever else an
        // opener left beside it is an empty file it made.
        #expect(FileManager.default.contents(atPath: url.path) == Data("{\"winner\":\(round)}\n".utf8))
        let names = try names(in: folder).filter { $0 != "s.jsonl" }
        let kept = names.map {
          FileManager.default.contents(atPath: folder.appendingPathComponent($0).path) ?? Data("unreadable".utf8)
        }
        #expect(kept.filter { $0 == Data("old\n".utf8) }.count == (hasOld ? 1 : 0), "\(names)")
        #expect(
          kept.allSatisfy { $0.isEmpty || $0 == Data("old\n".utf8) },
          "\(names): \(kept.map { String(decoding: $0, as: UTF8.self) })")
      }
    }
  }
}

/// What several threads got, in the order they got it.
private final class NoLinkOutcomes: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var outcomes: [Result<ActionLogOutput, ActionLogOutput.FileError>] = []

  func add(_ outcome: Result<ActionLogOutput, ActionLogOutput.FileError>) { lock.withLock { outcomes.append(outcome) } }
  var all: [Result<ActionLogOutput, ActionLogOutput.FileError>] { lock.withLock { outcomes } }
}
