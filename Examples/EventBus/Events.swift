import FluxCore

/// Something that happened, announced to every module that listens.
///
/// This file is all the modules share: none of them knows the others.
enum AppEvent: Sendable {
  case signedIn(user: String)
  case signedOut
}

/// The state type of the event bus. Every listener is a store of this type, so one global
/// dispatch, `Store<EventBus>.actions`, reaches all of them.
///
/// The stores keep no state of their own: their mutations hand each event to the listener's
/// handler, which turns it into actions of the module's own stores.
final class EventBus: State {
  typealias Action = AppEvent
  typealias Mutations = EventHandler

  /// Announces `event` to every live listener.
  static func post(_ event: AppEvent) {
    Store<EventBus>.actions.dispatch(action: event)
  }
}

/// Hands each event to one listener.
struct EventHandler: Mutations {
  let handle: @Sendable (AppEvent) -> Void

  func commit(action: AppEvent, state: EventBus) {
    handle(action)
  }
}

extension Store where State == EventBus {
  /// A listener: it receives every event posted while it is alive, on `executor`. Keep it for
  /// as long as the module listens; freeing it ends the subscription.
  convenience init(executor: Executor = .immediate, handle: @escaping @Sendable (AppEvent) -> Void) {
    self.init(state: EventBus(), mutations: EventHandler(handle: handle), executor: executor)
  }
}
