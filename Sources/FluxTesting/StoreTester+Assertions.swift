import Dispatch
import FluxCore

extension StoreTester {
  /// Dispatches `action`, then asserts which actions the store committed and cancelled, and,
  /// if given, that `state` holds.
  ///
  /// ```swift
  /// await tester.dispatch(.add(2))  // committed [.add(2)], nothing cancelled
  /// await tester.dispatch(.add(-1), committed: [], cancelled: [.add(-1)])
  /// await tester.dispatch(.reset, committed: [.reset, .add(10)]) { $0.count.value == 10 }
  /// ```
  ///
  /// - Parameters:
  ///   - action: The action to dispatch.
  ///   - committed: Every action the store should have committed since the previous
  ///     assertion, in order; `[action]` by default.
  ///   - cancelled: Every action middleware should have cancelled since the previous assertion,
  ///     in order; none by default.
  ///   - isolation: The caller's isolation, where `state` runs; leave the default.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  ///   - state: A test of the state afterwards, read through `Computed`. When it fails, the
  ///     failure shows the state by its description (`CustomStringConvertible`), or else by its
  ///     stored properties, each `Variable` and `Constant` by its value, read as Swift's `dump`
  ///     reads them: an `unowned` property whose object is gone stops the test. That
  ///     description is taken where the store commits, right after each commit or cancel of
  ///     this assertion (so a commit on another thread never runs beside it), and the failure
  ///     shows the last one. When none was (an action still held), the state is shown only if
  ///     nothing is under way in the store.
  public func dispatch(
    _ action: State.Action,
    committed: [State.Action]? = nil,
    cancelled: [State.Action] = [],
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    state: ((Computed<State>) -> Bool)? = nil
  ) async {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    // A failure shows the state as a commit (or cancel) left it, described in the store's drain:
    // read here, it could be read while a commit on another thread changes it.
    if state != nil { recorder.startDescribing() }
    store.actions.dispatch(action: action)
    let context = "after dispatching \(action)"
    await check(context, committed: committed ?? [action], cancelled: cancelled, isolation: isolation, at: site)
    if let state { check(context, state: state, at: site) }
  }

  /// Dispatches `action`, then asserts which actions the store committed and cancelled, and
  /// what `reading` reads from the state afterwards.
  ///
  /// ```swift
  /// await tester.dispatch(.add(2), reading: \.count.value, equals: 2)
  /// // fails with: after dispatching add(2): the state reads 3, expected 2
  /// ```
  ///
  /// - Parameters:
  ///   - action: The action to dispatch.
  ///   - committed: Every action the store should have committed since the previous
  ///     assertion, in order; `[action]` by default.
  ///   - cancelled: Every action middleware should have cancelled since the previous assertion,
  ///     in order; none by default.
  ///   - reading: What to read from the state afterwards: a key path of
  ///     `Computed`, or a closure.
  ///   - expected: What it should read.
  ///   - isolation: The caller's isolation, where `reading` runs; leave the default.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  public func dispatch<Value: Equatable>(
    _ action: State.Action,
    committed: [State.Action]? = nil,
    cancelled: [State.Action] = [],
    reading: (Computed<State>) -> Value,
    equals expected: Value,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    store.actions.dispatch(action: action)
    let context = "after dispatching \(action)"
    await check(context, committed: committed ?? [action], cancelled: cancelled, isolation: isolation, at: site)
    check(context, reading: reading, equals: expected, at: site)
  }

  /// Asserts which actions the store committed and cancelled since the previous assertion,
  /// without dispatching: actions that came from elsewhere, such as a global dispatch or a
  /// held action that a middleware let go later.
  ///
  /// - Parameters:
  ///   - committed: Every action the store should have committed, in order.
  ///   - cancelled: Every action middleware should have cancelled, in order.
  ///   - isolation: The caller's isolation; leave the default.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  public func expect(
    committed: [State.Action] = [],
    cancelled: [State.Action] = [],
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    await check(
      "since the previous assertion", committed: committed, cancelled: cancelled, isolation: isolation, at: site)
  }

  /// Asserts what `reading` reads from the state now.
  ///
  /// - Parameters:
  ///   - reading: What to read: a key path of `Computed`, or a closure.
  ///   - expected: What it should read.
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  public func expect<Value: Equatable>(
    reading: (Computed<State>) -> Value,
    equals expected: Value,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    check("now", reading: reading, equals: expected, at: site)
  }

  /// Asserts that no action is left that an assertion did not cover, that no work waits on
  /// the tester's ``ManualExecutor`` (a drain that a worker thread is about to submit, for an
  /// action whose `Proceed` a middleware let go undecided, counts), and that nothing is under way in the store (an action
  /// queued, committing on another thread, or held by a middleware: one that no assertion
  /// waited for). Without a manual executor, it first waits, up to the tester's `timeout`, for
  /// what runs on the store's executor to end, except on the main queue for a store whose
  /// executor is the main queue (waiting there would keep that work from running: await an
  /// assertion before). Call it at the end of a test.
  ///
  /// - Parameters:
  ///   - fileID: The caller's file, for the failure; leave the default.
  ///   - filePath: The caller's file path, for the failure; leave the default.
  ///   - line: The caller's line, for the failure; leave the default.
  ///   - column: The caller's column, for the failure; leave the default.
  public func finish(
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    if let manual { waitForOwedDrain(manual) }
    // Read once: work may be submitted from another thread meanwhile.
    if let pending = manual?.pendingCount, pending > 0 {
      let work = pending == 1 ? "1 piece of work still waits" : "\(pending) pieces of work still wait"
      fail(
        "at the end of the test, \(work) on the manual executor (actions no assertion ran: await an assertion "
          + "first)", at: site, harness: harness)
    } else if !waitUntilSettled() {
      let onMain = MainQueue.shared.isOnMainQueue && runsOnMainQueue
      let hint = onMain ? " (on the main queue, finish() cannot wait for its work: await an assertion first)" : ""
      fail(
        "at the end of the test, the store still has actions under way (queued, committing, or held by a "
          + "middleware) that no assertion waited for" + hint, at: site, harness: harness)
    }
    let left = recorder.takeAll()
    if !left.isEmpty {
      fail("at the end of the test, actions no assertion covered: \(describe(left))", at: site, harness: harness)
    }
  }

  /// Whether the store is settled, or settles within the timeout: the end of a drain (shared
  /// middleware's `didCommit` runs after the tester's recorder, say) may still run on another
  /// thread when the last assertion returns. Waits by polling; never with a manual executor,
  /// nor on the main queue for a store whose work runs there: waiting would keep it from
  /// running. (A store on a queue that targets the main queue, which the tester cannot see, is
  /// waited for until the timeout.)
  private func waitUntilSettled() -> Bool {
    if store.isSettled { return true }
    if manual != nil || (runsOnMainQueue && MainQueue.shared.isOnMainQueue) { return false }
    let deadline = deadlineFromNow
    let pause = DispatchSemaphore(value: 0)
    while DispatchTime.now().uptimeNanoseconds < deadline {
      _ = pause.wait(timeout: .now() + .milliseconds(1))
      if store.isSettled { return true }
    }
    return false
  }

  // MARK: Checks

  /// Checks what the store committed and cancelled since the previous assertion; returns
  /// whether it was as expected.
  @discardableResult
  func check(
    _ context: String, committed: [State.Action], cancelled: [State.Action],
    isolation: isolated (any Actor)?, at site: CallSite
  ) async -> Bool {
    let records = await settle(expecting: committed.count + cancelled.count, isolation: isolation)
    let actualCommitted = records.compactMap { if case .committed(let action) = $0 { action } else { nil } }
    let actualCancelled = records.compactMap { if case .cancelled(let action) = $0 { action } else { nil } }
    let hint = stalledHint(found: records.count, expected: committed.count + cancelled.count)
    if actualCommitted != committed {
      fail(
        "\(context): the store committed \(list(actualCommitted)), expected \(list(committed))" + hint, at: site,
        harness: harness)
    }
    if actualCancelled != cancelled {
      // The hint once: after the list of commits if that failed too.
      fail(
        "\(context): middleware cancelled \(list(actualCancelled)), expected \(list(cancelled))"
          + (actualCommitted != committed ? "" : hint), at: site, harness: harness)
    }
    return actualCommitted == committed && actualCancelled == cancelled
  }

  /// Why fewer actions ended than expected: the store's executor never ran its drain (a store
  /// given a manual executor's `executor`, say, rather than the manual executor itself), or a
  /// middleware still holds an action (one that decides later, on another thread: a tester on a
  /// manual executor runs what waits and does not wait for more). Nothing when the drain runs
  /// (a commit that takes longer than the timeout).
  private func stalledHint(found: Int, expected: Int) -> String {
    guard found < expected else { return "" }
    if manual == nil, store.isAwaitingExecutor {
      return "; after \(timeout) s, actions still wait for the store's executor to run them (for a "
        + "ManualExecutor, give the tester the ManualExecutor itself, not its `executor`: the tester runs it)"
    }
    // Drained but not settled: nothing waits or commits, so what is under way is held.
    guard store.isDrained, !store.isSettled else { return "" }
    if manual != nil {
      return "; a middleware still holds an action: with a ManualExecutor the tester runs the work that "
        + "waits and does not wait for a middleware to decide (once it has, assert with expect(committed:))"
    }
    return "; after \(timeout) s, a middleware still holds an action"
  }

  /// Checks `state`; a failure shows the state as the last commit or cancel since the dispatch
  /// left it (described in the store's drain), or, when none did, as it is now if nothing is
  /// under way in the store: never read while a commit may run.
  private func check(_ context: String, state: (Computed<State>) -> Bool, at site: CallSite) {
    let holds = state(store.computed)
    let described = recorder.stopDescribing()
    guard !holds else { return }
    let shown: String
    if let described {
      shown = "it is \(described)"
    } else if store.isSettled {
      shown = "it is \(StateDescription.describe(store.computed.state))"
    } else {
      shown =
        "it is not shown: an action is still under way in the store, and its commit may change the state while "
        + "it is read"
    }
    fail("\(context): the state is not as expected; \(shown)", at: site, harness: harness)
  }

  private func check<Value: Equatable>(
    _ context: String, reading: (Computed<State>) -> Value, equals expected: Value, at site: CallSite
  ) {
    let actual = reading(store.computed)
    if actual != expected {
      fail("\(context): the state reads \(shown(actual)), expected \(shown(expected))", at: site, harness: harness)
    }
  }

  /// A value read from the state, for a failure: a string in quotes, with its escapes, so that an
  /// empty string, or one that differs by a space or an invisible character, shows; anything
  /// else by its description (`3`, `add(2)`), as the README's messages read.
  private func shown(_ value: some Equatable) -> String {
    value is any StringProtocol || value is Character ? String(reflecting: value) : "\(value)"
  }

  private func list(_ actions: [State.Action]) -> String {
    "[" + actions.map { "\($0)" }.joined(separator: ", ") + "]"
  }

  private func describe(_ records: [TesterRecorder<State>.Record]) -> String {
    records.map { record in
      switch record {
      case .committed(let action): "committed \(action)"
      case .cancelled(let action): "cancelled \(action)"
      }
    }.joined(separator: ", ")
  }
}
