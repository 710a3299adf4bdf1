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
}
