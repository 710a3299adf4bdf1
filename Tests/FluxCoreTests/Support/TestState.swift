import FluxCore
import Foundation

/// A state that records every committed action and can run a hook inside the commit.
///
/// Generic over a tag so that each test can have a state type of its own: global dispatch
/// reaches every store of one state type, and tests run in parallel.
final class LogState<Tag>: State, @unchecked Sendable {
  typealias Action = Int
  typealias Mutations = LogMutations<Tag>

  // Set before the first dispatch, read during commits.
  nonisolated(unsafe) var hook: (@Sendable (Int) -> Void)?
  let committed = Recorder<Int>()
  private let activeLock = NSLock()
  // Guarded by `activeLock`.
  private var active = 0
  // Guarded by `activeLock`.
  private var overlaps = 0
  // Guarded by `activeLock`.
  private var threads: [ObjectIdentifier] = []

  init(hook: (@Sendable (Int) -> Void)? = nil) {
    self.hook = hook
  }

  /// How many commits began while another commit of this state was running.
  var overlapCount: Int { activeLock.withLock { overlaps } }

  fileprivate func begin() {
    activeLock.withLock {
      active += 1
      if active > 1 { overlaps += 1 }
    }
  }

  fileprivate func end() {
    activeLock.withLock { active -= 1 }
  }
}

struct LogMutations<Tag>: Mutations {
  func commit(action: Int, state: LogState<Tag>) {
    state.begin()
    defer { state.end() }
    state.committed.append(action)
    state.hook?(action)
  }
}
