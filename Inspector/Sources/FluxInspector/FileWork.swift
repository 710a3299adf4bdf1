import Dispatch

/// Work on files, done on threads of its own: never on the threads that answer requests.
///
/// The requests are answered by Swift's task pool, which has as many threads as the machine has
/// cores; checking a long log takes seconds, and a request that waits for it on one of those
/// threads would keep the page and its script from being answered (rule 21). A request
/// hands its file work here and waits without holding a thread.
enum FileWork {
  /// Where the work of many requests runs side by side: following the log, reading its bytes.
  private static let queue = DispatchQueue(label: "flux-inspector.files", attributes: .concurrent)

  /// Runs `body` on a thread of file work, and returns what it returns.
  static func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await run(on: queue, body)
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
