/// `eventually` for `@MainActor` tests and main-actor state: checks `condition` on the main
/// actor, suspending between checks so the main queue runs what the test waits for; fails
/// after a generous bound.
@MainActor
func eventuallyOnMainActor(_ condition: () -> Bool) async -> Bool {
  for _ in 0..<60_000 {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 1_000_000)
  }
  return condition()
}
