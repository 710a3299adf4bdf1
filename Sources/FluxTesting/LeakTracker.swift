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
/// A failure names the object's type and the line where it was tracked.
///
/// > Important: The check runs once, right after the body returns. An object that work still
/// > waiting on a queue or in a task keeps alive counts as a leak: let that work finish (or
/// > drop it) inside the body.
public final class LeakTracker: @unchecked Sendable {
  private struct Entry {
    weak var object: AnyObject?
    let type: String
    let site: CallSite
  }

  // `entries` is guarded by `lock`.
  /// The test library whose test made this tracker: its failures go there.
  private let harness = Harness.current
  private let lock = Lock()
  private var entries: [Entry] = []

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
    lock.withLock { entries.append(entry) }
    return object
  }

  /// Fails the test once for each tracked object still alive.
  func verify() {
    let tracked = lock.withLock {
      defer { entries = [] }
      return entries
    }
    // Looked at after the lock: reading a weak reference holds the object for a moment, and
    // if another thread lets go of it then, its deinit (the user's code) runs here.
    let alive = tracked.filter { $0.object != nil }.map { ($0.type, $0.site) }
    for (type, site) in alive {
      fail(
        "\(type), tracked at \(site.description), outlived the test: something still holds it", at: site,
        harness: harness)
    }
  }
}

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
  defer { tracker.verify() }
  return try await body(tracker)
}
