import Dispatch
import FluxCore

/// Keeps weak references to the objects a test tracks, and fails the test for each one that is
/// still alive when the test's body has returned.
///
/// Get one from ``withLeakTracking(_:)``, or its async form, and
/// pass each store, sink or variable the test creates through ``track(_:fileID:filePath:line:column:)``:
///
/// ```swift
/// @Test func observingDoesNotLeak() {
///   withLeakTracking { leaks in
///     let store = leaks.track(Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate))
///     let name = leaks.track(Variable("Ada"))
///     let observation = name.signal.observe { _ in store.actions.increment() }
///     observation.dispose()
///   }
/// }
/// ```
///
/// A failure names the object's type and the line where it was tracked. It goes through Swift
/// Testing when ``withLeakTracking(_:)`` is called in a Swift Testing test's task or a child
/// task, and through `XCTFail` otherwise: not from `Task.detached`, which runs outside the test.
///
/// > Important: The check runs right after the body returns. An object still alive then gets
/// > up to half a second to go: work that has just ended on another thread may hold it a
/// > moment longer (a drain on the main queue or a dispatch queue goes on for a moment after
/// > `dispatchAndWait` has learnt of its commit, and holds the store's state until it ends).
/// > The synchronous ``withLeakTracking(_:)`` waits by blocking its thread: called on the main
/// > queue (a synchronous XCTest test, or a `@MainActor` test whose body has no `await`, where
/// > Swift picks the synchronous form), it gives work on other queues that half second, but
/// > main-queue work cannot run meanwhile. An object that main-queue work still holds then is
/// > reported, and the failure says that the check waited on the main queue. The rule: on the
/// > main queue, let main-queue work that holds a tracked object end within the body, or use
/// > ``withLeakTracking(isolation:_:)`` with an `await` in its body, which waits by suspending
/// > and so lets the main queue run. An object that work still waiting on a queue or in a
/// > task keeps alive past that half second counts as a leak; work that lets go of it sooner
/// > goes unnoticed, so the check does not prove that no such work was left: let that work
/// > finish (or drop it) inside the body.
///
/// A tracker is not `Sendable`: it stays with the body, in the isolation the body runs in, and
/// so does every object it tracks that is not `Sendable` (the compiler refuses to send one
/// elsewhere once it is tracked). The check looks at each object where the body ran, and
/// looking holds it for a moment: an object that goes then is freed there, which is its own
/// thread or isolation, or any thread for a `Sendable` one.
public final class LeakTracker {
  private struct Entry {
    weak var object: AnyObject?
    let type: String
    let site: CallSite
  }

  /// The test library whose test made this tracker: its failures go there.
  private let harness = Harness.current
  // `entries` and `isChecked` are guarded by `lock`: a tracker kept after the body (in the same
  // isolation) may still be asked to track.
  private let lock = Lock()
  private var entries: [Entry] = []
  /// Whether the check has taken the entries: an object tracked later would never be looked at.
  private var isChecked = false

  init() {}

  /// Tracks `object`, and returns it.
  ///
  /// - Parameters:
  ///   - object: The object that must be freed by the end of the body.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  /// - Returns: `object`.
  ///
  /// Track within the body: an object tracked once it has returned (from work the body left
  /// running, or through a tracker kept after it) cannot be checked, and fails the test at once.
  @discardableResult
  public func track<Object: AnyObject>(
    _ object: Object,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> Object {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let entry = Entry(object: object, type: "\(type(of: object))", site: site)
    // Decided under the lock that the check takes the entries under: an entry is either taken
    // by the check, or found too late here; none is left behind unchecked.
    let isLate = lock.withLock {
      if !isChecked { entries.append(entry) }
      return isChecked
    }
    if isLate {
      fail(
        "\(entry.type), tracked at \(site.description) after the body of withLeakTracking returned, cannot be "
          + "checked: track it within the body", at: site, harness: harness)
    }
    return object
  }

  /// How long, in nanoseconds, an object still alive when the body returns may take to go.
  static let grace: UInt64 = 500_000_000

  /// Fails the test once for each tracked object still alive after the grace period, waiting
  /// by blocking the calling thread: on the main queue too, where work on other queues still
  /// ends meanwhile, but main-queue work cannot run, which a failure there says.
  func verify() {
    var alive = takeAlive()
    let deadline = DispatchTime.now().uptimeNanoseconds + Self.grace
    let pause = DispatchSemaphore(value: 0)
    while !alive.isEmpty, DispatchTime.now().uptimeNanoseconds < deadline {
      _ = pause.wait(timeout: .now() + .milliseconds(1))
      alive = Self.stillAlive(alive)
    }
    report(alive, blockedTheMainQueue: MainQueue.shared.isOnMainQueue)
  }

  /// Fails the test once for each tracked object still alive after the grace period, waiting
  /// by suspending, in the caller's isolation: the main actor lets the main queue run meanwhile.
  func verify(isolation: isolated (any Actor)? = #isolation) async {
    var alive = takeAlive()
    let deadline = DispatchTime.now().uptimeNanoseconds + Self.grace
    while !alive.isEmpty, DispatchTime.now().uptimeNanoseconds < deadline {
      try? await Task.sleep(nanoseconds: 1_000_000)
      alive = Self.stillAlive(alive)
    }
    report(alive)
  }

  /// Takes every entry, and keeps those whose object is alive.
  private func takeAlive() -> [Entry] {
    let tracked = lock.withLock {
      defer { (entries, isChecked) = ([], true) }
      return entries
    }
    return Self.stillAlive(tracked)
  }

  /// Looked at after the lock: reading a weak reference holds the object for a moment, and if
  /// another thread lets go of it then, its deinit (the user's code) runs here.
  private static func stillAlive(_ entries: [Entry]) -> [Entry] {
    entries.filter { $0.object != nil }
  }

  /// Fails the test for each of `alive`; `blockedTheMainQueue`: the grace period was waited on
  /// the main queue, so main-queue work that holds an object could not run and let go of it.
  private func report(_ alive: [Entry], blockedTheMainQueue: Bool = false) {
    let note =
      blockedTheMainQueue
      ? " (the check waited on the main queue, where the synchronous withLeakTracking lets no main-queue work run: "
        + "if such work holds it, let that work end within the body, or use the async form, with an `await` in "
        + "the body)" : ""
    for entry in alive {
      fail(
        "\(entry.type), tracked at \(entry.site.description), outlived the test: something still holds it" + note,
        at: entry.site, harness: harness)
    }
  }
}

/// A tracker stays with the body that tracks: see ``LeakTracker``.
@available(*, unavailable)
extension LeakTracker: Sendable {}

/// Runs `body` with a ``LeakTracker``, then fails the test for every object tracked in it that
/// is still alive.
///
/// ```swift
/// withLeakTracking { leaks in
///   let sink = leaks.track(Sink<Int>())
///   _ = sink.signal.observe { print($0) }
/// }
/// ```
///
/// - Parameter body: The test's body; it tracks what it creates.
/// - Returns: What `body` returns.
public func withLeakTracking<Result>(
  _ body: (LeakTracker) throws -> Result
) rethrows -> Result {
  let tracker = LeakTracker()
  defer { tracker.verify() }
  return try body(tracker)
}

/// Runs the async `body` with a ``LeakTracker``, in the caller's isolation, then fails the
/// test for every object tracked in it that is still alive.
///
/// ```swift
/// await withLeakTracking { leaks in
///   let store = leaks.track(Store<CounterState>(state: .init(), mutations: .init(), executor: .mainThread))
///   await store.actions.dispatchAndWait(action: .increment)
/// }
/// ```
///
/// - Parameters:
///   - isolation: The caller's isolation, where `body` runs; leave the default.
///   - body: The test's body; it tracks what it creates.
/// - Returns: What `body` returns.
public func withLeakTracking<Result>(
  isolation: isolated (any Actor)? = #isolation,
  _ body: (LeakTracker) async throws -> Result
) async rethrows -> Result {
  let tracker = LeakTracker()
  let result: Result
  do {
    result = try await body(tracker)
  } catch {
    await tracker.verify()
    throw error
  }
  await tracker.verify()
  return result
}
