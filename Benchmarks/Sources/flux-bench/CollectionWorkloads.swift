import FluxCore
import FluxReactive

// Workloads whose state is a collection or a string, changed in place: W15 appends to an array,
// W16 removes from and appends to a 1,000-element array, W17 commits to a store whose state holds
// 1,000 todo items, W18 appends to a string. A change that copied the whole value would cost
// thousands of instructions per index here, where an `Int` workload cannot show it. Flux changes
// collections with `modify`, as its documentation teaches; the baseline with a locked closure.

/// One item of W17's todo-like state.
struct BenchItem: Sendable {
  var id: Int
  var title: String
  var isDone = false
}

/// W17's 1,000 items.
func benchItems() -> [BenchItem] {
  (0..<1_000).map { BenchItem(id: $0, title: "Item \($0)") }
}

extension FluxWorkloads {
  /// W15: `modify { $0.append(i) }`; the observer adds the last element, `i`.
  static func arrayAppends(tally: Tally) -> Prepared {
    let variable = Variable([Int]())
    variable.signal.observe { tally.add($0.last ?? 0) }
    return Prepared(
      run: { range in
        for value in range { variable.modify { $0.append(value) } }
      },
      expected: { sum($0) }
    )
  }

  /// W16: 1,000 elements; each index removes the last and appends `i`.
  static func arrayRemovals(tally: Tally) -> Prepared {
    let variable = Variable(Array(0..<1_000))
    variable.signal.observe { tally.add($0.last ?? 0) }
    return Prepared(
      run: { range in
        for value in range {
          variable.modify { array in
            array.removeLast()
            array.append(value)
          }
        }
      },
      expected: { sum($0) }
    )
  }

  /// W17: a store of 1,000 todo items; each action toggles one through `modify` in a mutation.
  static func todoStore(tally: Tally) -> Prepared {
    let store = Store<BenchTodoState>(state: BenchTodoState(), mutations: BenchTodoMutations(), executor: .immediate)
    store.computed.items.observe { tally.add($0.count) }
    return Prepared(
      run: { range in
        for value in range { store.actions.dispatch(action: .toggle(value % 1_000)) }
      },
      expected: { $0.count &* 1_000 }
    )
  }

  /// W18: `modify { $0.append("x") }` on a string; the observer adds its last byte.
  static func stringAppends(tally: Tally) -> Prepared {
    let variable = Variable("")
    variable.signal.observe { tally.add(Int($0.utf8.last ?? 0)) }
    return Prepared(
      run: { range in
        for _ in range { variable.modify { $0.append("x") } }
      },
      expected: { $0.count &* Int(UInt8(ascii: "x")) }
    )
  }
}

/// W17's state: 1,000 todo items in one variable.
final class BenchTodoState: State {
  typealias Action = BenchTodoAction
  typealias Mutations = BenchTodoMutations

  let items = Variable(benchItems())
}

enum BenchTodoAction: Sendable {
  case toggle(Int)
}

struct BenchTodoMutations: Mutations {
  func commit(action: BenchTodoAction, state: BenchTodoState) {
    switch action {
    case .toggle(let index):
      state.items.modify { $0[index].isDone.toggle() }
    }
  }
}

extension Computed where State == BenchTodoState {
  /// The items, as a view reads them.
  fileprivate var items: Signal<[BenchItem]> {
    state.items.signal
  }
}

extension BaselineWorkloads {
  static func arrayAppends(tally: Tally) -> Prepared {
    let box = BaselineBox([Int]()) { tally.add($0.last ?? 0) }
    return Prepared(
      run: { range in
        for value in range { box.modify { $0.append(value) } }
      },
      expected: { sum($0) }
    )
  }

  static func arrayRemovals(tally: Tally) -> Prepared {
    let box = BaselineBox(Array(0..<1_000)) { tally.add($0.last ?? 0) }
    return Prepared(
      run: { range in
        for value in range {
          box.modify { array in
            array.removeLast()
            array.append(value)
          }
        }
      },
      expected: { sum($0) }
    )
  }

  static func todoStore(tally: Tally) -> Prepared {
    let box = BaselineBox(benchItems()) { tally.add($0.count) }
    return Prepared(
      run: { range in
        for value in range { box.modify { $0[value % 1_000].isDone.toggle() } }
      },
      expected: { $0.count &* 1_000 }
    )
  }

  static func stringAppends(tally: Tally) -> Prepared {
    let box = BaselineBox("") { tally.add(Int($0.utf8.last ?? 0)) }
    return Prepared(
      run: { range in
        for _ in range { box.modify { $0.append("x") } }
      },
      expected: { $0.count &* Int(UInt8(ascii: "x")) }
    )
  }
}

/// A value and one observer: a change runs in place under the lock and is delivered there.
final class BaselineBox<Value>: @unchecked Sendable {
  // Guarded by `lock`.
  private let lock = BaselineLock()
  private var value: Value
  private let observer: (Value) -> Void

  init(_ value: Value, observer: @escaping (Value) -> Void) {
    self.value = value
    self.observer = observer
  }

  @inline(__always)
  func modify(_ body: (inout Value) -> Void) {
    lock.lock()
    body(&value)
    observer(value)
    lock.unlock()
  }
}
