#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The options of a full run.
struct RunOptions {
  var repetitions = 5
  var rounds = 2
  var workloads = Workload.allCases
  var implementations = Implementation.allCases
  var jsonPath: String?
}

/// Runs every workload of every contender in `repetitions` fresh processes each (interleaved,
/// so drift hits all alike), prints the table and writes the results file.
func runAll(_ options: RunOptions) -> Int32 {
  var samples: [Workload: [Implementation: [Sample]]] = [:]
  let executable = currentExecutable()
  for repetition in 1...options.repetitions {
    for workload in options.workloads {
      for implementation in options.implementations where implementation.runs(workload) {
        printError("[\(repetition)/\(options.repetitions)] \(workload.rawValue) \(implementation.title)")
        let command =
          "'\(executable)' child \(workload.rawValue) \(implementation.rawValue) --rounds \(options.rounds)"
        guard let sample = runChild(command) else { return 1 }
        samples[workload, default: [:]][implementation, default: []].append(sample)
      }
    }
  }
  let report = Report(options: options, samples: samples)
  return publish(markdown: report.markdown(), json: report.json(), to: options.jsonPath)
}

/// Prints `markdown`, and writes `json` to `path` when there is one; the exit status.
func publish(markdown: String, json: @autoclosure () -> String, to path: String?) -> Int32 {
  print(markdown)
  if let path {
    guard writeFile(json(), to: path) else {
      printError("cannot write \(path)")
      return 1
    }
    printError("wrote \(path)")
  }
  return 0
}

/// Runs `command` and parses the `RESULT` line it prints; `nil` if it failed.
func runChild(_ command: String) -> Sample? {
  guard let pipe = popen(command, "r") else { return nil }
  var output = ""
  var line = [CChar](repeating: 0, count: 4096)
  while fgets(&line, Int32(line.count), pipe) != nil {
    output += String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
  let status = pclose(pipe)
  guard status == 0, let result = output.split(separator: "\n").first(where: { $0.hasPrefix("RESULT ") }) else {
    printError("failed (status \(status)): \(command)\n\(output)")
    return nil
  }
  var fields: [Substring: Substring] = [:]
  for field in result.split(separator: " ").dropFirst() {
    let parts = field.split(separator: "=", maxSplits: 1)
    if parts.count == 2 { fields[parts[0]] = parts[1] }
  }
  guard let nanoseconds = fields["ns"].flatMap({ Double($0) }) else { return nil }
  return Sample(
    nanoseconds: nanoseconds,
    allocations: fields["allocs"].flatMap { Double($0) },
    bytes: fields["bytes"].flatMap { Double($0) }
  )
}

/// The line a child prints for its parent.
func resultLine(_ sample: Sample) -> String {
  var line = "RESULT ns=\(sample.nanoseconds)"
  if let allocations = sample.allocations { line += " allocs=\(allocations)" }
  if let bytes = sample.bytes { line += " bytes=\(bytes)" }
  return line
}

/// The path of this executable, so that children run the same build.
func currentExecutable() -> String {
  var buffer = [CChar](repeating: 0, count: 4096)
  let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  if length > 0 {
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
  return CommandLine.arguments[0]
}

func printError(_ message: String) {
  let line = message + "\n"
  _ = line.withCString { write(2, $0, strlen($0)) }
}

func writeFile(_ text: String, to path: String) -> Bool {
  guard let file = fopen(path, "w") else { return false }
  defer { fclose(file) }
  return fputs(text, file) >= 0
}
