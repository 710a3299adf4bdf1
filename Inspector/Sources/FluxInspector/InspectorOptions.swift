/// What the command line asks of `flux-inspector`.
///
/// ```
/// flux-inspector [session.jsonl] [--port N] [--host ADDRESS] [--apps-port N] [--listen ADDRESS]
/// flux-inspector session.jsonl --html report.html [--force]
/// flux-inspector session.jsonl --swift-test Tests/AppTests/SessionTests.swift [--final-state-only] [--force]
/// ```
public struct InspectorOptions: Sendable, Equatable {
  /// The action log to show, if any: with none, the inspector shows the apps that connect.
  public var logPath: String?
  /// The port to listen on; 0 lets the system choose one.
  public var port: Int = 0
  /// The address to listen on.
  public var host: String = "127.0.0.1"
  /// The port apps connect to; 0 lets the system choose one.
  public var appsPort: Int = 0
  /// The address apps connect to from other machines, who must then present the pairing code;
  /// `nil` for this machine only.
  public var listenAddress: String?
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
    usage: flux-inspector [LOG.jsonl] [--port N] [--host ADDRESS] [--apps-port N] [--listen ADDRESS]
           flux-inspector LOG.jsonl --html FILE.html [--force]
           flux-inspector LOG.jsonl --swift-test FILE.swift [--final-state-only] [--force]

    Shows the stores of running apps in a browser, and steers them; and an action log of Flux
    stores, with its new lines as they are written. Apps connect with FLUX_INSPECTOR=HOST:PORT,
    as it prints.

      --port N          serve the page on port N (by default, a free port that the system chooses)
      --host ADDRESS    serve the page on ADDRESS (by default 127.0.0.1: this machine only)
      --apps-port N     take apps on port N (by default, a free port that the system chooses)
      --listen ADDRESS  take apps on ADDRESS, such as 0.0.0.0 for every network of this machine
                        (by default 127.0.0.1: apps on this machine only); they must then present
                        the pairing code it prints (FLUX_INSPECTOR_PAIRING)
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
      case "--apps-port":
        let text = try value(of: "--apps-port")
        guard let number = Int(text), (0...65535).contains(number) else {
          throw InspectorError("--apps-port needs a number from 0 to 65535, not \(text)")
        }
        appsPort = number
      case "--listen":
        let address = try value(of: "--listen")
        guard !address.isEmpty else { throw InspectorError("--listen needs an address, not an empty one") }
        listenAddress = address
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
    guard path != "" else { throw InspectorError("the log's path is empty: give the path of an action log") }
    guard path != nil || htmlPath == nil else {
      throw InspectorError("which log? --html writes the page of a log: give its path")
    }
    guard path != nil || swiftTestPath == nil else {
      throw InspectorError("which log? --swift-test writes the test of a log: give its path")
    }
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
