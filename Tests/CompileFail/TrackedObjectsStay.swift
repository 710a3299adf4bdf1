// swift-format-ignore-file
// An object that is not Sendable stays where it was tracked, and the tracker with it: the check
// looks at each object (and may free it) there, so neither is sent to another task.
import FluxTesting

final class Draft {
  var text = ""
}

func sendsATrackedObject() async {
  await withLeakTracking { leaks in
    let draft = leaks.track(Draft())
    await Task.detached { draft.text = "elsewhere" }.value  // expected-error {{passing closure as a 'sending' parameter risks causing data races between code in the current task and concurrent execution of the closure}}
    // expected-note@-1 {{closure captures 'draft' which is accessible to code in the current task}}
  }
}

func tracksInADetachedTask() async {
  await withLeakTracking { leaks in
    await Task.detached { _ = leaks.track(Draft()) }.value  // expected-error {{passing closure as a 'sending' parameter risks causing data races between code in the current task and concurrent execution of the closure}}
    // expected-note@-1 {{closure captures 'leaks' which is accessible to code in the current task}}
  }
}
