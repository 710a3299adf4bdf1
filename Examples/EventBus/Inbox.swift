import FluxCore

/// The message inbox. It greets the user who signs in and forgets everything on sign-out.
final class Inbox {
  private let store = Store<InboxState>(state: .init(), mutations: .init(), executor: .immediate)
  private let listener: Store<EventBus>

  init() {
    let actions = store.actions
    listener = Store<EventBus> { event in
      switch event {
      case .signedIn(let user): actions.dispatch(action: .receive("Welcome back, \(user)!"))
      case .signedOut: actions.dispatch(action: .clear)
      }
    }
  }
}

enum InboxAction: Sendable {
  case receive(String)
  case clear
}

// Only `InboxMutations` reads or writes `messages`, one commit at a time.
final class InboxState: State, @unchecked Sendable {
  typealias Action = InboxAction
  typealias Mutations = InboxMutations

  fileprivate var messages: [String] = []
}

struct InboxMutations: Mutations {
  func commit(action: InboxAction, state: InboxState) {
    switch action {
    case .receive(let message):
      state.messages.append(message)
      print("[inbox] new message: \(message)")
    case .clear:
      print("[inbox] signed out: messages cleared")
      state.messages.removeAll()
    }
  }
}
