import Foundation
import Testing

@testable import todo

#if canImport(Glibc)
  import Glibc
#endif

/// A `todo.md` that is no plain file (a pipe, a link to a device), and two sessions that save
/// one folder at once, run as child processes.
@Suite("Pipes, devices and two sessions", .serialized)
struct SpecialFileTests {
  /// Stops a child that would wait for ever, or fill the memory, rather than the test run: a
  /// run this ends has the status 124 (`timeout`) or a signal.
  static let bounded = ["/usr/bin/timeout", "-s", "KILL", "20", "/usr/bin/prlimit", "--as=8589934592", "--"]

  @Test(
    "rule 17: a todo.md that is a pipe or a link to a device is refused at start and by load, and save keeps it",
    arguments: ["pipe", "/dev/zero", "/dev/null"])
  func inv17_aTodoFileThatIsNoPlainFileIsRefused(kind: String) throws {
    guard Faults.isLinux else { return }
    let folder = try Faults.temporaryFolder("special")
    defer { try? FileManager.default.removeItem(at: folder) }
    let lists = folder.appendingPathComponent("todo-lists")
    try FileManager.default.createDirectory(at: lists, withIntermediateDirectories: true)
    let file = FileFaultTests.todoFile(in: folder)
    if kind == "pipe" {
      try #require(mkfifo(file.path, 0o644) == 0)
    } else {
      try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: kind)
    }
    let run = try Faults.run(
      [], input: "add New\nload\nsave\n", in: folder, environment: ["SWIFT_BACKTRACE": "enable=no"],
      through: Self.bounded)
    #expect(!run.wasSignalled && run.status == 1, "\(run.status) \(run.text)")
    let cause = "is not a plain file (a device, a pipe or a socket)"
    #expect(run.errors.contains("todo: cannot read \(file.path): \(cause); starting with an empty Inbox"))
    #expect(run.errors.contains("Error: cannot read \(file.path): \(cause)"))
    #expect(run.errors.contains("Error: could not save to \(kind == "pipe" ? file.path : kind): \(cause)"))
    #expect(!run.text.contains("Saved"))
  }
}
