/// What the command line asks of `flux-inspector`.
///
/// ```
/// flux-inspector session.jsonl [--port N] [--host ADDRESS] [--html report.html [--force]]
/// flux-inspector session.jsonl --swift-test Tests/AppTests/SessionTests.swift [--final-state-only] [--force]
/// ```
public struct InspectorOptions: Sendable, Equatable {
  /// The action log to show.
  public var logPath: String
  /// The port to listen on; 0 lets the system choose one.
  public var port: Int = 0
  /// The address to listen on.
  public var host: String = "127.0.0.1"
  /// Where to write a self-contained page instead of serving one, if anywhere.
  public var htmlPath: String?
  /// Where to write a Swift Testing file that replays the session instead of serving it, if
  /// anywhere (``SessionTestExport``).
  public var swiftTestPath: String?
  /// Whether that test checks only the final state of each store (`--final-state-only`).
  public var isFinalStateOnly = false
  /// Whether the page replaces a file at ``htmlPath`` or ``swiftTestPath`` that flux-inspector did
  /// not write (`--force`).
  public var isForced = false
  /// Whether the user asked for the usage only.
  public var isHelp = false

  /// How to call the program.
  public static let usage = """
    usage: flux-inspector LOG.jsonl [--port N] [--host ADDRESS] [--html FILE.html [--force]]
           flux-inspector LOG.jsonl --swift-test FILE.swift [--final-state-only] [--force]

    Shows an action log of Flux stores in a browser, and its new lines as they are written.

      --port N          listen on port N (by default, a free port that the system chooses)
      --host ADDRESS    listen on ADDRESS (by default 127.0.0.1: this machine only)
      --html FILE.html  write the page, with the log inside, to one file that opens from disk;
                        serve nothing. It replaces only a page that flux-inspector wrote, and
                        never the log
      --swift-test FILE.swift
                        write a Swift Testing file that replays the session, one test per
                        store, checking the state after each action; serve nothing. It
                        replaces only a test that flux-inspector wrote, and never the log
      --final-state-only
                        with --swift-test, check only the state after each store's last action
      --force           with --html or --swift-test, replace the file even if flux-inspector
                        did not write it
      --help            show this help
    """

  /// Reads the arguments, without the program's name.
  ///
  /// - Parameter arguments: The command line after the program's name.
  /// - Throws: An ``InspectorError`` in one line when an argument is unknown, missing or wrong.
  public init(arguments: [String]) throws(InspectorError) {
    var path: String?
    var rest = arguments[...]
    func value(of option: String) throws(InspectorError) -> String {
      guard let value = rest.popFirst(), !value.hasPrefix("--") else {
        throw InspectorError("\(option) needs a value")
      }
      return value
    }
    logPath = ""
    while let argument = rest.popFirst() {
      switch argument {
      case "--help", "-h":
        isHelp = true
      case "--port":
        let text = try value(of: "--port")
        guard let number = Int(text), (0...65535).contains(number) else {
          throw InspectorError("--port needs a number from 0 to 65535, not \(text)")
        }
        port = number
      case "--host":
        host = try value(of: "--host")
        guard !host.isEmpty else { throw InspectorError("--host needs an address, not an empty one") }
      case "--html":
        let path = try value(of: "--html")
        guard !path.isEmpty else { throw InspectorError("--html needs the name of a file, not an empty one") }
        htmlPath = path
      case "--force":
        isForced = true
      case "--swift-test":
        let path = try value(of: "--swift-test")
        guard !path.isEmpty else { throw InspectorError("--swift-test needs the name of a file, not an empty one") }
        swiftTestPath = path
      case "--final-state-only":
        isFinalStateOnly = true
      default:
        guard !argument.hasPrefix("-") || argument == "-" else {
          throw InspectorError("unknown option \(argument)")
        }
        guard path == nil else { throw InspectorError("one log only: \(path!) and \(argument)") }
        path = argument
      }
    }
    if isHelp { return }
    guard let path else { throw InspectorError("which log? give the path of an action log") }
    guard !path.isEmpty else { throw InspectorError("the log's path is empty: give the path of an action log") }
    guard !isForced || htmlPath != nil || swiftTestPath != nil else {
      throw InspectorError("--force goes with --html or --swift-test: nothing else replaces a file")
    }
    logPath = path
    if htmlPath != nil && swiftTestPath != nil {
      throw InspectorError("--html and --swift-test write one file each: give one of them")
    }
    if isFinalStateOnly && swiftTestPath == nil {
      throw InspectorError("--final-state-only goes with --swift-test FILE.swift")
    }
  }
}
