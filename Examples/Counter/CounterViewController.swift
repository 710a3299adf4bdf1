import FluxCore
import FluxReactive

/// A label that prints what it shows.
@MainActor final class Label {
  let name: String

  var text: String? {
    didSet { print("\(name): \(text ?? "")") }
  }

  init(name: String) {
    self.name = name
  }
}

/// A line that prints when it appears or disappears.
@MainActor final class Banner {
  let message: String

  var isHidden = true {
    didSet {
      if isHidden != oldValue { print(isHidden ? "(\(message) hidden)" : message) }
    }
  }

  init(message: String) {
    self.message = message
  }

  var hiddenBinder: Binder<Bool> {
    Binder(target: self) { banner, isHidden in
      banner.isHidden = isHidden
    }
  }
}

/// The README's view controller, with plain classes for the label and the view.
@MainActor final class CounterViewController {
  let counterLabel = Label(name: "count")
  let belowZeroBanner = Banner(message: "below zero!")

  // VueFlux's README commits on `.queue(.global())` and lets the bindings hop to the main
  // thread. This program handles taps on the main thread and never leaves it, so it commits on
  // `.mainThread`: there, with nothing waiting, commits and bindings run inline and each tap's
  // label update is printed before the next tap.
  private let store = Store<CounterState>(state: .init(), mutations: .init(), executor: .mainThread)

  func viewDidLoad() {
    store.computed.countTextValues.bind(to: counterLabel, \.text)
    store.computed.isCountNonNegative.bind(to: belowZeroBanner.hiddenBinder)
  }

  func incrementButtonTapped() {
    store.actions.increment()  // Store<CounterState>.actions.increment() reaches every counter
  }

  func decrementButtonTapped() {
    store.actions.decrement()
  }
}
