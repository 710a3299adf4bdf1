import Dispatch
import Foundation

/// Work on files, done on threads of its own: never on the threads that answer requests.
///
/// The requests are answered by Swift's task pool, which has as many threads as the machine has
/// cores, and which on Linux is Dispatch's own pool: work handed to a Dispatch queue waits for
/// the same threads as the requests. Checking a long log takes seconds, and each page that
/// follows the log checks what is appended, so a request that waits behind that work would
/// keep the page and its script from being answered (rule 21). A request hands its file work
/// to threads that only this work runs on, and waits without holding a thread.
enum FileWork {
  /// Where the work of many requests runs side by side, in the order it comes: following the
  /// log, reading its bytes.
  private static let threads = FileThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount))

  /// Runs `body` on a thread of file work, and returns what it returns.
  static func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
      threads.submit { continuation.resume(returning: body()) }
    }
  }

  /// Runs `body` on `queue`, and returns what it returns.
  static func run<Result: Sendable>(
    on queue: DispatchQueue, _ body: @escaping @Sendable () -> Result
  ) async -> Result {
    await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: body()) }
    }
  }
}

/// Threads that run the work given to them, in the order it comes, and nothing else: they wait
/// for work as long as the process runs.
final class FileThreads: @unchecked Sendable {
  private let condition = NSCondition()
  // Guarded by `condition`: the only state that changes, which makes the class sound to share.
  private var waiting: [@Sendable () -> Void] = []

  /// Starts `count` threads.
  init(count: Int) {
    for index in 0..<count {
      let thread = Thread { [self] in self.work() }
      thread.name = "flux-inspector files \(index)"
      thread.start()
    }
  }

  /// Runs `job` on one of the threads, after the work given before it has started.
  func submit(_ job: @escaping @Sendable () -> Void) {
    condition.withLock {
      waiting.append(job)
      condition.signal()
    }
  }

  private func work() {
    while true {
      let job = condition.withLock {
        while waiting.isEmpty { condition.wait() }
        return waiting.removeFirst()
      }
      job()
    }
  }
}
