import FluxDevtools
import Foundation
import Testing

@testable import todo

@Suite("Commands and options")
struct CommandTests {
  @Test(
    "words after a command that takes nothing, or after an item number, are an error",
    arguments: [
      ("lists extra", "lists takes nothing, not \"extra\""),
      ("show me", "show takes nothing, not \"me\""),
      ("help now", "help takes nothing, not \"now\""),
      ("quit now", "quit takes nothing, not \"now\""),
      ("clear foo", "clear takes nothing or \"all\", not \"foo\""),
      ("done 1 2", "one item number, not \"1 2\"; like: done 2"),
      ("remove 3 please", "one item number, not \"3 please\"; like: remove 2"),
    ])
  func extraWords(line: String, message: String) {
    let error = #expect(throws: CommandError.self) { try Command(parsing: line) }
    #expect(error?.message == message)
  }

  @Test("a command that takes a name, a title or a folder takes the rest of the line")
  func restOfTheLine() throws {
    #expect(try Command(parsing: "add Buy oat milk") == .add("Buy oat milk"))
    #expect(try Command(parsing: "new Weekend plans") == .new("Weekend plans"))
    #expect(try Command(parsing: "save my lists") == .save("my lists"))
    #expect(try Command(parsing: "save --replace") == .save(nil, replacing: true))
    #expect(try Command(parsing: "save --replace elsewhere") == .save("elsewhere", replacing: true))
  }

  @Test("a title or a name with a control character is refused")
  func controlCharacters() {
    for line in ["add a\tb", "new x\u{1B}[2J", "edit 1 bell\u{7}"] {
      let error = #expect(throws: CommandError.self) { try Command(parsing: line) }
      #expect(error?.message == "a name or title cannot hold a control character (a tab, an escape, a line break)")
    }
  }

  @Test("an option given twice is an error")
  func repeatedOption() throws {
    for arguments in [["--record", "a", "--record", "b"], ["--log", "--log"], ["-h", "--help"]] {
      let error = #expect(throws: CommandError.self) { try Options.parsing(arguments[...]) }
      #expect(error?.message.hasSuffix("is given twice") == true)
    }
    #expect(try Options.parsing(["--record", "s", "--replay", "s", "--quiet"]).record == "s")
  }

  @Test("--flight-recorder takes a number of actions from 1 to 1,000,000")
  func flightRecorderOption() throws {
    #expect(try Options.parsing(["--flight-recorder", "500"]).flightRecorder == 500)
    for bad in ["0", "1000001", "-3", "many", "99999999999999999999999"] {
      let error = #expect(throws: CommandError.self) { try Options.parsing(["--flight-recorder", bad]) }
      #expect(
        error?.message
          == "--flight-recorder needs a number of actions from 1 to 1000000, like: todo --flight-recorder 500")
    }
  }

  @Test("todo --flight-recorder N writes the last N actions when it ends")
  func flightRecorderRun() throws {
    let folder = try Faults.temporaryFolder("flight-recorder")
    defer { try? FileManager.default.removeItem(at: folder) }
    _ = try Faults.run(["--flight-recorder", "2"], input: "add Milk\nadd Eggs\nadd Tea\n", in: folder)
    let recording = try Recording(contentsOf: folder.appendingPathComponent("flight-record.jsonl"))
    #expect(recording.entries.count == 2)
    #expect(recording.entries.map(\.store) == ["list:Inbox", "list:Inbox"])
  }

  @Test(
    "a mistyped command, flag or option names the one it most likely meant",
    arguments: [
      ("shw", #"unknown command "shw" (did you mean "show"?); type help to see the commands"#),
      ("dnoe 1", #"unknown command "dnoe" (did you mean "done"?); type help to see the commands"#),
      ("Lod", #"unknown command "Lod" (did you mean "load"?); type help to see the commands"#),
      ("remve 2", #"unknown command "remve" (did you mean "remove"?); type help to see the commands"#),
      ("frobnicate", #"unknown command "frobnicate"; type help to see the commands"#),
      (
        "save --replac",
        "save has no flag --replac; did you mean --replace? (a folder whose name starts with -- is written ./--replac)"
      ),
      (
        "load --discrad x",
        "load has no flag --discrad; did you mean --discard? (a folder whose name starts with -- is written ./--discrad)"
      ),
      (
        "save --force",
        "save has no flag --force; its flag is --replace (a folder whose name starts with -- is written ./--force)"
      ),
    ])
  func didYouMean(line: String, message: String) {
    let error = #expect(throws: CommandError.self) { try Command(parsing: line) }
    #expect(error?.message == message)
  }

  @Test("a mistyped option names the one it most likely meant")
  func didYouMeanAnOption() {
    let error = #expect(throws: CommandError.self) { try Options.parsing(["--recrod", "s.jsonl"]) }
    #expect(error?.message == "unknown option --recrod; did you mean --record?")
    let unknown = #expect(throws: CommandError.self) { try Options.parsing(["--frobnicate"]) }
    #expect(unknown?.message == "unknown option --frobnicate")
  }

  @Test("load and save take their flag before the folder; a folder may start with --, written ./--")
  func loadAndSaveFlags() throws {
    #expect(try Command(parsing: "load") == .load(nil))
    #expect(try Command(parsing: "load --discard") == .load(nil, discarding: true))
    #expect(try Command(parsing: "load --discard my lists") == .load("my lists", discarding: true))
    #expect(try Command(parsing: "save ./--replace") == .save("./--replace"))
  }
}
