#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `body` on two new threads at once, on the two halves of `range`, and waits for both.
func onTwoThreads(_ range: Range<Int>, _ body: @escaping @Sendable (Range<Int>) -> Void) {
  let middle = range.lowerBound + range.count / 2
  let first = startThread { body(range.lowerBound..<middle) }
  let second = startThread { body(middle..<range.upperBound) }
  join(first)
  join(second)
}

private final class ThreadBody {
  let body: @Sendable () -> Void

  init(_ body: @escaping @Sendable () -> Void) {
    self.body = body
  }
}

#if canImport(Glibc)
  private typealias Thread = pthread_t
#else
  private typealias Thread = pthread_t?
#endif

private func startThread(_ body: @escaping @Sendable () -> Void) -> Thread {
  let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
  #if canImport(Glibc)
    var thread = pthread_t()
  #else
    var thread: pthread_t?
  #endif
  let status = pthread_create(
    &thread, nil,
    { context in
      Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
      return nil
    }, context)
  precondition(status == 0, "pthread_create failed with status \(status)")
  return thread
}

private func join(_ thread: Thread) {
  #if canImport(Glibc)
    pthread_join(thread, nil)
  #else
    pthread_join(thread!, nil)
  #endif
}
