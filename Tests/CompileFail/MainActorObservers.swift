// swift-format-ignore-file
// A @MainActor type cannot observe with a closure that touches its state on the sending thread;
// it writes `observe(on: .mainActor)`, and its bindings are made on the main actor.
import FluxCore
import FluxReactive

@MainActor final class ViewModel {
  var title = ""  // expected-note {{mutation of this property is only permitted within the actor}}

  func observesOnTheSendingThread(_ signal: Signal<String>) {
    signal.observe { self.title = $0 }  // expected-error {{main actor-isolated property 'title' can not be mutated from a Sendable closure}}
  }

  func passesAMainActorClosure(_ signal: Signal<String>) {
    signal.observe { @MainActor in self.title = $0 }  // expected-error {{converting function value of type '@MainActor @Sendable (String) -> ()' to '@Sendable (String) -> Void' loses global actor 'MainActor'}}
  }

  // A scoped observation calls its observer on the sending thread too: no main-actor closure.
  func scopesAMainActorClosure(_ signal: Signal<String>) {
    signal.observe(duringScopeOf: self) { @MainActor in self.title = $0 }  // expected-error {{converting function value of type '@MainActor @Sendable (String) -> ()' to '@Sendable (String) -> Void' loses global actor 'MainActor'}}
  }
}

@MainActor final class Label {
  var text: String?
}

// expected-note@+1 {{add '@MainActor' to make global function 'bindsOffTheMainActor(_:label:)' part of global actor 'MainActor'}}
func bindsOffTheMainActor(_ signal: Signal<String>, label: Label) {
  signal.bind(to: label, \.text)  // expected-error {{call to main actor-isolated instance method 'bind(to:_:on:)' in a synchronous nonisolated context}}
  // expected-error@-1 {{cannot form key path to main actor-isolated property 'text'}}
}

final class PlainView {
  var isHidden = false
}

// expected-note@+1 {{add '@MainActor' to make global function 'makesABinderOffTheMainActor' part of global actor 'MainActor'}}
func makesABinderOffTheMainActor(_ view: PlainView) -> Binder<Bool> {
  Binder(target: view) { view, isHidden in view.isHidden = isHidden }  // expected-error {{call to main actor-isolated initializer 'init(target:binding:)' in a synchronous nonisolated context}}
}

// A main-actor method of a plain object, partly applied, is not a main-actor observer: it
// would take the object to the main actor while its caller keeps it.
final class Draft {
  var text = ""

  @MainActor func show(_ text: String) {
    self.text = text
  }
}

func observesWithAMethodOfAPlainObject(_ signal: Signal<String>) {
  let draft = Draft()
  signal.observe(on: .mainActor, draft.show)  // expected-error {{converting non-Sendable function value to '@MainActor @Sendable (String) -> Void' may introduce data races}}
}
