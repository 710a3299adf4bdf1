import FluxCore

/// Returns once every piece of `Executor.mainThread` work submitted before the call has run.
///
/// `.mainThread` keeps one order for the whole process: work runs inline only when nothing
/// submitted earlier still waits. In a test on the main actor, a binding or an
/// `observe(on: .mainThread)` observer then updates its target before the setting line returns,
/// unless other work waits: work that a test running in parallel submitted from another thread,
/// say. Await this before checking what such work does, and the check holds whatever runs
/// beside the test:
///
/// ```swift
/// @Test @MainActor func titleFollowsTheCount() async {
///   let count = Variable(0)
///   let label = Label()
///   count.signal.map { "\($0)" }.bind(to: label, \.text)
///   count.value = 1
///   await drainMainThreadWork()
///   #expect(label.text == "1")
/// }
/// ```
///
/// Work submitted while the awaited work runs may still wait when this returns.
public func drainMainThreadWork() async {
  await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
    // Runs after everything submitted before it: the order is first submitted, first run.
    Executor.mainThread.execute { done.resume() }
  }
}
