import FluxCore

/// Reports every event it hears, until it is freed.
final class Analytics {
  private let listener: Store<EventBus>

  init() {
    listener = Store<EventBus> { event in
      print("[analytics] event: \(event)")
    }
  }
}
