// Uses the check must report: each line marked with what it reports.
import Observation
import Synchronization

final class Counter: Observable {  // expect: Observation
  let registrar = ObservationRegistrar()  // expect: Observation
  let count = Atomic<Int>(0)  // expect: Synchronization.Atomic
}

func wait() async throws {
  try await Task.sleep(for: .seconds(1))  // expect: clocks and Duration
  let (stream, continuation) = AsyncStream.makeStream(of: Int.self)  // expect: AsyncStream.makeStream
  _ = (stream, continuation)
}

// Guarded for macOS only: `*` means the minimum on iOS, tvOS and watchOS.
@available(macOS 15, *)
func lockedOnMacOnly() -> Mutex<Int> { Mutex(0) }  // expect: Synchronization.Mutex

// A guard too old for what it guards.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func tooOld() {
  withObservationTracking { _ = 1 } onChange: {}  // expect: Observation
}

// The branch Apple platforms take when the Linux one is not.
#if os(Linux)
  let onLinux = Atomic<Int>(0)
#else
  let elsewhere = Atomic<Int>(0)  // expect: Synchronization.Atomic
#endif

// A flag does not hide a branch: the check tries it set and unset.
#if os(Linux) || FLUX_PORTABLE
  let portable = Atomic<Bool>(false)  // expect: Synchronization.Atomic
#endif

// The else block of an `if #available` is not guarded.
func fallback() {
  if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
    _ = ObservationRegistrar()
  } else {
    _ = ObservationRegistrar()  // expect: Observation
  }
}

// After a string that holds a quote and a comment marker, code is code again.
let text = "a \" quote // not a comment"; let late = Atomic<Int>(1)  // expect: Synchronization.Atomic

func write(_ handle: FileHandle) throws {
  try handle.write(contentsOf: Data())  // expect: FileHandle's throwing API
}

func soon() {
  Task.immediate { print("now") }  // expect: Task.immediate
}

// The project's own declarations under `@available` need the same guard where they are used.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class Registration: Observable {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
func makeRegistration() -> Registration { Registration() }

let registration = makeRegistration()  // expect: makeRegistration
let other: Registration? = nil  // expect: Registration
