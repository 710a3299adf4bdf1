// swift-format-ignore-file
// What a variable or a main-actor closure keeps stays in one domain: a variable's value is not
// sent away from inside `modify`, a variable a main-actor observer captures is the main actor's
// from then on, and a target or a binder made elsewhere does not reach the main actor.
import FluxCore
import FluxReactive

final class Draft {
  var text = ""
}

final class PlainView {
  var isHidden = false
}

func modifiesAndSendsTheValue(_ drafts: Variable<Draft>) {
  drafts.modify { draft in
    let taken = draft
    Task.detached { taken.text = "elsewhere" }  // expected-error {{passing closure as a 'sending' parameter risks causing data races between code in the current task and concurrent execution of the closure}}
    // expected-note@-1 {{closure captures 'taken' which is accessible to code in the current task}}
  }
}

func observesOnMainAndKeepsTheVariable(_ signal: Signal<String>) {
  let draft = Variable(Draft())
  signal.observe(on: .mainActor) { draft.value.text = $0 }  // expected-error {{sending 'draft' risks causing data races}}
  // expected-note@-1 {{'draft' is captured by a main actor-isolated closure. main actor-isolated uses in closure may race against later nonisolated uses}}
  draft.value.text = "here"  // expected-note {{access can happen concurrently}}
}

func bindsATargetItKeeps(_ signal: Signal<Bool>, view: PlainView) async {
  await signal.bind(to: view, \.isHidden)  // expected-error {{sending 'view' risks causing data races}}
  // expected-note@-1 {{sending task-isolated 'view' to main actor-isolated instance method 'bind(to:_:on:)' risks causing data races between main actor-isolated and task-isolated uses}}
}

func makesABinderElsewhere() async {
  let view = PlainView()
  _ = await Binder(target: view) { view, isHidden in view.isHidden = isHidden }  // expected-error {{non-Sendable 'Binder<Bool>'-typed result can not be returned from main actor-isolated initializer 'init(target:binding:)' to nonisolated context}}
}
