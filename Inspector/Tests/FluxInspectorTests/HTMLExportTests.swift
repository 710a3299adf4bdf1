import FluxInspector
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

private func permissions(_ path: String) throws -> Int {
  try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

/// Rule 17: no command writes over the file it reads, nor over a file it could not have written
/// unasked; a file replaced whole keeps what the user set on it.
@Suite("--html writes a report, and nothing else")
struct HTMLExportTests {
  /// The log named as the report, however it is spelled.
  @Test(arguments: ["same", "dot", "symlink", "hardlink"])
  func htmlNeverWritesOverTheLogItReads(spelling: String) async throws {
    let scratch = try Scratch()
    let text = Fixture.line() + "\n"
    let log = try scratch.write("session.jsonl", text)
    let target: String
    switch spelling {
    case "dot": target = scratch.url.path + "/./session.jsonl"
    case "symlink":
      target = scratch.path("report.html")
      try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: log)
    case "hardlink":
      target = scratch.path("report.html")
      try FileManager.default.linkItem(atPath: log, toPath: target)
    default: target = log
    }
    let run = try await runInspector([log, "--html", target])
    #expect(run.status == 1)
    #expect(run.error == "flux-inspector: cannot write \(target): it is the log \(log), which is read\n")
    #expect(run.output.isEmpty)
    #expect(try String(contentsOfFile: log, encoding: .utf8) == text)
  }

  @Test func htmlWithItsArgumentsSwappedWritesOverNothing() async throws {
    let scratch = try Scratch()
    let text = Fixture.line() + "\n"
    let log = try scratch.write("session.jsonl", text)
    let report = scratch.path("report.html")
    #expect(try await runInspector([log, "--html", report]).status == 0)
    let html = try String(contentsOfFile: report, encoding: .utf8)
    // `flux-inspector --html session.jsonl report.html`: the report read as a log, the log as
    // the place of the report.
    let run = try await runInspector(["--html", log, report])
    #expect(run.status == 1)
    #expect(run.error.hasPrefix("flux-inspector: cannot write \(log): it is not a page that flux-inspector wrote"))
    #expect(try String(contentsOfFile: log, encoding: .utf8) == text)
    #expect(try String(contentsOfFile: report, encoding: .utf8) == html)
  }

  @Test func htmlDoesNotWriteOverAnotherFileUnlessAsked() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let notes = try scratch.write("notes.html", "<p>my notes</p>")
    let run = try await runInspector([log, "--html", notes])
    #expect(run.status == 1)
    #expect(
      run.error
        == "flux-inspector: cannot write \(notes): it is not a page that flux-inspector wrote; give --force to replace it\n"
    )
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "<p>my notes</p>")
    let forced = try await runInspector([log, "--html", notes, "--force"])
    #expect(forced.status == 0, "\(forced.error)")
    #expect(try String(contentsOfFile: notes, encoding: .utf8).contains(#"<script id="flux-log""#))
  }

  @Test func htmlKeepsThePermissionsOfTheReportItReplaces() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let report = scratch.path("report.html")
    #expect(try await runInspector([log, "--html", report]).status == 0)
    #expect(chmod(report, 0o600) == 0)
    #expect(try await runInspector([log, "--html", report]).status == 0)
    #expect(try permissions(report) == 0o600)
    #expect(chmod(report, 0o640) == 0)
    #expect(try await runInspector([log, "--html", report]).status == 0)
    #expect(try permissions(report) == 0o640)
  }

  @Test func aNewReportIsReadableByNoOneWhoCannotReadItsLog() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    #expect(chmod(log, 0o600) == 0)
    let report = scratch.path("report.html")
    #expect(try await runInspector([log, "--html", report]).status == 0)
    #expect(try permissions(report) == 0o600)
  }

  @Test func htmlWithAnEmptyNameSaysWhatIsMissing() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let run = try await runInspector([log, "--html", ""])
    #expect(run.status == 2)
    #expect(run.error.hasSuffix("flux-inspector: --html needs the name of a file, not an empty one\n"))
  }

  @Test func htmlToAFolderSaysItIsAFolder() async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let run = try await runInspector([log, "--html", scratch.url.path])
    #expect(run.status == 1)
    #expect(run.error == "flux-inspector: cannot write \(scratch.url.path): it is a folder\n")
  }
}

@Suite("--host errors in words")
struct HostOptionTests {
  @Test(arguments: ["nonsense.invalid", "300.1.1.1", "127.0.0.1:80", "::1::2"])
  func anAddressThatCannotBeListenedOnIsAnErrorInWords(host: String) async throws {
    let scratch = try Scratch()
    let log = try scratch.write("session.jsonl", Fixture.line() + "\n")
    let run = try await runInspector([log, "--host", host])
    #expect(run.status == 1)
    #expect(run.error.hasPrefix("flux-inspector: cannot listen on \(host)"), "\(run.error)")
    for word in ["SocketAddressError", "Error(", "unknown(", "host:", "NIO"] {
      #expect(!run.error.contains(word), "\(run.error)")
    }
  }

  @Test func anEmptyHostIsAnError() async throws {
    #expect(throws: InspectorError("--host needs an address, not an empty one")) {
      try InspectorOptions(arguments: ["s.jsonl", "--host", ""])
    }
  }
}
