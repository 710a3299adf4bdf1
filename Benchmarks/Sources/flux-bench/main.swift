#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

let usage = """
  usage: flux-bench [run] [--reps N] [--rounds N] [--workloads W1,W2,…] [--implementations flux,baseline,opencombine,observable]
                          [--json PATH]
         flux-bench smoke
         flux-bench child WORKLOAD IMPLEMENTATION [--rounds N] [--size N]
         flux-bench scaling [--reps N] [--curves send,global,churn,queue,main] [--implementations flux,baseline,opencombine]
                            [--work F] [--sizes 100,10000] [--json PATH]
         flux-bench scaling-child CURVE IMPLEMENTATION SIZE [--work F]
         flux-bench inspector [--actions N] [--rounds N]
         flux-bench log-curve [--sizes 10,100,1000,10000,100000]
         flux-bench log-pace [--paces 1,10,100,250,500,1500]
         flux-bench mirror-curve [--sizes 1,10,100,1000] [--actions N]

  run    (default) each workload of each contender in N fresh processes; prints the table of medians
  smoke  every workload of every contender once at a tiny size in this process; checks the counters;
         then each Flux scaling curve at 100 and 10,000, which must grow no faster than linear
  child  one measurement, printed as a RESULT line (what run starts)
  scaling        the cost per item of each curve at each size, in N fresh processes per point
  scaling-child  one point of a curve, printed as a RESULT line (what scaling starts)
  inspector      what a live InspectorConnection costs a committing store, with a live, a slow and a
                 dead inspector (Linux)
  log-curve      what a logged action with a snapshot costs the committing thread and end to end,
                 over the size of the state
  log-pace       what a logged action costs the committing thread, and the whole process, at paces
                 from 1 ms to 1.5 s between actions
  mirror-curve   the same with `snapshots: .mirror`; `--actions N` runs N actions once per size
                 (for callgrind)
  """

/// Runs every workload of every contender once at a tiny size, then checks the Flux scaling
/// curves; exits non-zero on a wrong counter or a curve that grows faster than linear.
func smoke() -> Int32 {
  var failures = 0
  if !allocationCountingWorks() {
    printError("note: allocations cannot be counted on this platform")
  }
  for workload in Workload.allCases {
    for implementation in Implementation.allCases where implementation.runs(workload) {
      do {
        let sample = try measure(workload, implementation, smoke: true, rounds: 1)
        print("ok   \(workload.rawValue) \(workload.name) \(implementation.title) \(resultLine(sample))")
      } catch {
        print("FAIL \(error)")
        failures += 1
      }
    }
  }
  let total = Workload.allCases.reduce(0) { total, workload in
    total + Implementation.allCases.filter { $0.runs(workload) }.count
  }
  print("\(total - failures) passed, \(failures) failed")
  let linear = scalingSmoke()
  return failures == 0 && linear ? 0 : 1
}

func child(_ arguments: ArraySlice<String>) -> Int32 {
  guard arguments.count >= 2, let workload = Workload(rawValue: arguments[arguments.startIndex]),
    let implementation = Implementation(rawValue: arguments[arguments.startIndex + 1])
  else {
    printError(usage)
    return 2
  }
  func option(_ name: String) -> Int? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.endIndex else { return nil }
    return Int(arguments[index + 1])
  }
  do {
    let sample = try measure(
      workload, implementation, smoke: false, rounds: option("--rounds") ?? 2, size: option("--size"))
    print(resultLine(sample))
    return 0
  } catch {
    printError("wrong counter: \(error)")
    return 1
  }
}

func run(_ arguments: ArraySlice<String>) -> Int32 {
  var options = RunOptions()
  var remaining = arguments
  while let option = remaining.popFirst() {
    guard let value = remaining.popFirst() else {
      printError(usage)
      return 2
    }
    switch option {
    case "--reps": options.repetitions = max(1, Int(value) ?? options.repetitions)
    case "--rounds": options.rounds = max(1, Int(value) ?? options.rounds)
    case "--json": options.jsonPath = value
    case "--workloads":
      options.workloads = value.split(separator: ",").compactMap { name in
        Workload.allCases.first { $0.rawValue.lowercased() == name.lowercased() }
      }
    case "--implementations":
      options.implementations = value.split(separator: ",").compactMap { Implementation(rawValue: String($0)) }
    default:
      printError(usage)
      return 2
    }
  }
  return runAll(options)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "help", "--help", "-h":
  print(usage)
  exit(0)
case "smoke": exit(smoke())
case "child": exit(child(arguments.dropFirst()))
case "run": exit(run(arguments.dropFirst()))
case "scaling": exit(scaling(arguments.dropFirst()))
case "scaling-child": exit(scalingChild(arguments.dropFirst()))
case "log-curve": exit(LogCurve.main(arguments.dropFirst()))
case "log-pace": exit(LogPace.main(arguments.dropFirst()))
case "mirror-curve": exit(MirrorCurve.main(arguments.dropFirst()))
#if canImport(Glibc)
  case "inspector": exit(InspectorBench.main(arguments.dropFirst()))
#endif
case nil: exit(run(arguments))
case let other? where other.hasPrefix("--"): exit(run(arguments))
default:
  printError(usage)
  exit(2)
}
