// Uses the check must accept: every one is guarded, dead on Apple platforms, or not code.
import Observation
import Synchronization

/* A block comment that names Atomic<Int> and withObservationTracking,
   /* nested */ and still Atomic<Int> after the nested one. */

/// A documentation comment: `Mutex<Int>` and `AsyncStream.makeStream()`.
let message = "Atomic<Int>(0) and Task.sleep(for: .seconds(1)) in a string"
let multiline = """
  ObservationRegistrar() in a multi-line string
  """
let raw = #"Mutex<Int>(0) with a "quote" inside"#

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class Tracked: Observable {
  let registrar = ObservationRegistrar()

  func track() {
    withObservationTracking { _ = 1 } onChange: {}
  }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
let word = Atomic<Int>(0)

@available(macOS, introduced: 15)
@available(iOS, introduced: 18)
@available(tvOS, introduced: 18)
@available(watchOS, introduced: 11)
func spelledOut() -> Mutex<Int> { Mutex(0) }

func branches() async throws {
  if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
    try await Task.sleep(for: .seconds(1))
  }
  guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
  let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
  _ = (stream, continuation)
}

#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  let fast = Atomic<UInt64>(0)
#elseif canImport(Glibc)
  let alsoLinux = Atomic<UInt64>(0)
#else
  let slow = 0
#endif

#if canImport(Glibc)
  let glibc = Mutex<Int>(0)
#endif

@available(*, unavailable)
func never() -> Mutex<Int> { Mutex(0) }

// A hand-written type of the same name is not Observation's protocol.
final class Observable<Value> {}
let own: Observable<Int> = Observable()

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class Registration: Observable {}

func register() {
  if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
    _ = Registration()
  }
}
