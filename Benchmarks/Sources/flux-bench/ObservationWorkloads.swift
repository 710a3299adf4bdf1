import FluxReactive
import Observation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// W3o: W3 with an active Observation tracker. A variable with one observer is read inside
// `withObservationTracking`; each set fires the tracker, whose `onChange` tracks the value again,
// as a SwiftUI view does when it renders after a change. So every set pays Observation's
// `willSet`/`didSet` with one tracker registered, and a new tracking. (W3 is the same set with
// nobody tracking.)

extension FluxWorkloads {
  static func trackedVariableSets(tally: Tally) -> Prepared {
    guard #available(macOS 14, *) else { return prepare(.w3, tally: tally) }
    let variable = Variable(0)
    variable.signal.observe { tally.add($0) }
    return trackedSets(of: variable)
  }
}

extension BaselineWorkloads {
  /// What the `@Observable` macro writes, by hand: `withMutation` around a locked set.
  static func trackedVariableSets(tally: Tally) -> Prepared {
    guard #available(macOS 14, *) else { return prepare(.w3, tally: tally) }
    return trackedSets(of: ObservedBaselineVariable(0) { tally.add($0) })
  }
}

/// What W3o reads inside `withObservationTracking` and sets.
private protocol TrackedValue: AnyObject, Sendable {
  var value: Int { get set }
}

extension Variable: TrackedValue where Value == Int {}

/// W3o on `variable`: tracked now and again from each `onChange`; each index is set as its
/// value.
@available(macOS 14, *)
private func trackedSets(of variable: some TrackedValue) -> Prepared {
  @Sendable func track() {
    withObservationTracking({ _ = variable.value }, onChange: { track() })
  }
  track()
  return Prepared(
    run: { range in
      for value in range { variable.value = value }
    },
    expected: { sum($0) }
  )
}

extension OpenCombineWorkloads {
  /// OpenCombine has no Observation: its W3o is its W3.
  static func trackedVariableSets(tally: Tally) -> Prepared {
    prepare(.w3, tally: tally)
  }
}

/// A variable with one observer, observable as an `@Observable` class's property is.
@available(macOS 14, *)
private final class ObservedBaselineVariable: Observable, TrackedValue, @unchecked Sendable {
  // `stored` and the observer are guarded by `mutex`.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var stored: Int
  private let observer: (Int) -> Void
  private let registrar = ObservationRegistrar()

  init(_ value: Int, observer: @escaping (Int) -> Void) {
    stored = value
    self.observer = observer
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    observer(value)
  }

  var value: Int {
    get {
      registrar.access(self, keyPath: \.value)
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return stored
    }
    set {
      registrar.withMutation(of: self, keyPath: \.value) {
        pthread_mutex_lock(mutex)
        stored = newValue
        observer(newValue)
        pthread_mutex_unlock(mutex)
      }
    }
  }
}

// W3r's baseline: the floor for a set after a read, what the `@Observable` macro writes plus one
// delivery (Observation's public API cannot tell a read inside `withObservationTracking` from
// one outside it; see the README).

extension BaselineWorkloads {
  static func variableSetsAfterRead(tally: Tally) -> Prepared {
    guard #available(macOS 14, *) else { return prepare(.w3, tally: tally) }
    let variable = ObservedBaselineVariable(0) { tally.add($0) }
    tally.add(variable.value)  // the one read: 0
    return Prepared(
      run: { range in
        for value in range { variable.value = value }
      },
      expected: { sum($0) }
    )
  }
}

// The `@Observable` contender: a class with one observed property, written with the macro. It
// has no observers to deliver to, so its counter is checked through its final value.

@available(macOS 14, *)
@Observable
final class ObservableCounter: @unchecked Sendable {
  var value = 0
}

enum ObservableWorkloads {
  static func prepare(_ workload: Workload, tally: Tally) -> Prepared {
    guard #available(macOS 14, *) else { preconditionFailure("Observation needs macOS 14") }
    let model = ObservableCounter()
    let finish: () -> Int = {
      tally.add(model.value)
      return model.value
    }
    switch workload {
    case .w3:
      return Prepared(
        run: { range in for value in range { model.value = value } }, expected: { _ in 0 }, finish: finish)
    case .w3r:
      _ = model.value
      return Prepared(
        run: { range in for value in range { model.value = value } }, expected: { _ in 0 }, finish: finish)
    case .w3m:
      return Prepared(run: { range in for _ in range { model.value += 1 } }, expected: { _ in 0 }, finish: finish)
    case .w3o:
      @Sendable func track() {
        withObservationTracking({ _ = model.value }, onChange: { track() })
      }
      track()
      return Prepared(
        run: { range in for value in range { model.value = value } }, expected: { _ in 0 }, finish: finish)
    default:
      preconditionFailure("\(workload.rawValue) has no @Observable contender")
    }
  }
}
