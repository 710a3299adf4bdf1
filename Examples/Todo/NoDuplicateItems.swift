import FluxCore

/// A list holds one item of a title that is not done: an `add` of a title that an item not done
/// has already (in any case) is cancelled. The middleware of every list's store.
struct NoDuplicateItems: Middleware {
  func intercept(action: TodoAction, state: TodoListState, proceed: Proceed) {
    guard case .add(let added) = action else { return proceed() }
    let title = Title.clean(added)
    let isThere = state.snapshot.contains { !$0.isDone && ListName.same($0.title, title) }
    isThere ? proceed.cancel() : proceed()
  }
}
