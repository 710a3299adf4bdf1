import FluxInspector
import Foundation

// flux-inspector LOG.jsonl [--port N] [--host ADDRESS] [--html FILE.html [--force]]
// flux-inspector LOG.jsonl --swift-test FILE.swift [--final-state-only] [--force]: see InspectorOptions.

/// Prints `message` to standard error as one line, and exits with `code`.
func fail(_ message: String, code: Int32 = 1) -> Never {
  FileHandle.standardError.write(Data("flux-inspector: \(message)\n".utf8))
  exit(code)
}

// A write past the process's file-size limit is an error to report (and the file written aside to
// remove), not a signal that ends the program.
signal(SIGXFSZ, SIG_IGN)

let options: InspectorOptions
do {
  options = try InspectorOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  FileHandle.standardError.write(Data((InspectorOptions.usage + "\n").utf8))
  fail(error.message, code: 2)
}
if options.isHelp {
  print(InspectorOptions.usage)
  exit(0)
}

if let htmlPath = options.htmlPath {
  do {
    try InspectorPage.writeSelfContained(logPath: options.logPath, to: htmlPath, replacingAnyFile: options.isForced)
    print("Wrote \(htmlPath): open it in a browser.")
    exit(0)
  } catch {
    fail(error.message)
  }
}

if let testPath = options.swiftTestPath {
  do {
    let leftOut = try SessionTestExport.write(
      logPath: options.logPath, to: testPath, stateChecks: options.isFinalStateOnly ? .finalState : .afterEveryAction,
      replacingAnyFile: options.isForced)
    print("Wrote \(testPath): one test per store of the session.")
    for problem in leftOut {
      FileHandle.standardError.write(Data("flux-inspector: left out \(problem)\n".utf8))
    }
    exit(0)
  } catch {
    fail(error.message)
  }
}

let server = InspectorServer(logPath: options.logPath, host: options.host, port: options.port)
do {
  try await server.run(handleSignals: true) { address in
    // Unbuffered: a script that started the server reads the address at once.
    FileHandle.standardOutput.write(Data("Flux Inspector: \(address) (\(options.logPath))\n".utf8))
  }
} catch {
  fail(error.message)
}
