import Dispatch
import FluxCore
import FluxDevtools
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a logged action costs at a steady pace, from a burst to one every 1.5 s: the committing
/// thread's time per dispatch, and the CPU time of the whole process per action (every thread:
/// the dispatch, and the log's checks, encoding and writes), each against the same store without
/// a log. The state is `log-curve`'s, of 10 items, with every field and its snapshot.
///
/// Within the log's linger (31.5 ms) a line wakes no thread; past it, the committing thread wakes
/// the log's. After a pause the committing thread also finds its caches cold, whatever the log
/// does: the column without a log shows how much of that the dispatch alone pays. The process
/// pays for the linger's checks too: each wakes the log's thread.
enum LogPace {
  static let paces: [Double] = [0.001, 0.01, 0.1, 0.25, 0.5, 1.5]

  static func main(_ arguments: ArraySlice<String>) -> Int32 {
    let paces =
      arguments.firstIndex(of: "--paces").flatMap { index in
        arguments.index(after: index) < arguments.endIndex
          ? arguments[arguments.index(after: index)].split(separator: ",").compactMap { Double($0) }.map { $0 / 1_000 }
          : nil
      } ?? Self.paces
    print(
      "| pace | actions | commit-thread ns/action, median (mean) | (no log) | process CPU ns/action | (no log) |")
    print("|--:|--:|--:|--:|--:|--:|")
    for pace in paces where pace > 0 && pace <= 60 {
      // About 4 s of actions at each pace, and at least 5 of them.
      let actions = max(5, min(400, Int((4 / pace).rounded())))
      let logged = measure(pace: pace, actions: actions, logged: true)
      let unlogged = measure(pace: pace, actions: actions, logged: false)
      print(
        "| \(LoggedBurst.format(pace * 1_000)) ms | \(actions) "
          + "| \(LoggedBurst.format(logged.median)) (\(LoggedBurst.format(logged.mean))) "
          + "| \(LoggedBurst.format(unlogged.median)) (\(LoggedBurst.format(unlogged.mean))) "
          + "| \(LoggedBurst.format(logged.cpu)) | \(LoggedBurst.format(unlogged.cpu)) |")
    }
    return 0
  }

  /// Nanoseconds per action: the median and mean of the dispatches on the committing thread, and
  /// the process's CPU time from the first pause to the log's `flush()` after the last action.
  private static func measure(pace: Double, actions: Int, logged: Bool) -> (median: Double, mean: Double, cpu: Double) {
    let log = ActionLog(output: ActionLogOutput { _ in }, fields: .all)
    let store = Store<ItemsState>(
      state: ItemsState(items: 10), mutations: ItemsMutations(), executor: .immediate,
      middlewares: logged ? [log.middleware(label: "items", snapshots: .snapshot)] : [])
    // A first action, so that nothing is made for the first time in the timed ones.
    store.actions.dispatch(action: .count)
    log.flush()
    var each: [UInt64] = []
    each.reserveCapacity(actions)
    let started = processTime()
    for _ in 0..<actions {
      Thread.sleep(forTimeInterval: pace)
      let dispatched = DispatchTime.now().uptimeNanoseconds
      store.actions.dispatch(action: .count)
      each.append(DispatchTime.now().uptimeNanoseconds - dispatched)
    }
    log.flush()
    let cpu = processTime() - started
    withExtendedLifetime((log, store)) {}
    let sorted = each.sorted()
    let total = each.reduce(0, +)
    return (Double(sorted[sorted.count / 2]), Double(total) / Double(actions), Double(cpu) / Double(actions))
  }

  /// The CPU time of every thread of the process, in nanoseconds.
  private static func processTime() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }
}
