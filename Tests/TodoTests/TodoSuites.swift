import Testing

/// The tests that make stores of `TodoListState`, one after the other: `clear all` is a global
/// action, which reaches every live list store of the process, those of other tests too.
@Suite("Todo lists", .serialized)
enum ListStoreSuites {}
