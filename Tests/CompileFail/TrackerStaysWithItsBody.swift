// swift-format-ignore-file
// A leak tracker stays with the body that tracks, in its isolation: the check looks at each
// tracked object there, and may free it there, so no other thread tracks through it.
import Dispatch
import FluxTesting

final class Draft {
  var text = ""
}

func tracksOnAnotherThread() {
  withLeakTracking { leaks in
    DispatchQueue.global().async {
      leaks.track(Draft())  // expected-error {{capture of 'leaks' with non-Sendable type 'LeakTracker' in a '@Sendable' closure}}
    }
  }
}
