import FluxCore
import FluxTesting
import Testing

@testable import todo

extension ListStoreSuites {
  /// The store of one list, tested with `StoreTester`: each dispatch asserts what was committed
  /// and what the list reads afterwards.
  @Suite("A list's store")
  struct TodoListStoreTests {
    func makeTester() -> StoreTester<TodoListState> {
      StoreTester(state: TodoListState(name: "Inbox"), mutations: TodoMutations())
    }

    @Test("adding numbers the items from 1, and the rows show them")
    func add() async {
      let list = makeTester()
      await list.dispatch(.add(title: "Milk"), reading: \.items.value.count, equals: 1)
      await list.dispatch(.add(title: "Eggs"), reading: { $0.items.value.map(\.id) }, equals: [1, 2])
      list.expect(reading: { $0.items.value.map(\.title) }, equals: ["Milk", "Eggs"])
      list.finish()
    }

    @Test("done, rename and remove change the item they name, and only it")
    func changeOneItem() async {
      let list = makeTester()
      await list.dispatch(.add(title: "Milk"))
      await list.dispatch(.add(title: "Eggs"))
      await list.dispatch(.setDone(id: 2, isDone: true)) { $0.items.value.map(\.isDone) == [false, true] }
      await list.dispatch(.rename(id: 1, title: "Oat milk"), reading: \.items.value[0].title, equals: "Oat milk")
      await list.dispatch(.remove(id: 1), reading: { $0.items.value.map(\.title) }, equals: ["Eggs"])
      list.finish()
    }

    @Test("clearing removes the done items")
    func clearCompleted() async {
      let list = makeTester()
      await list.dispatch(.add(title: "Milk"))
      await list.dispatch(.add(title: "Eggs"))
      await list.dispatch(.setDone(id: 1, isDone: true))
      await list.dispatch(.clearCompleted, reading: { $0.items.value.map(\.title) }, equals: ["Eggs"])
      list.finish()
    }

    @Test("clear all is one global action: every live list commits it")
    func clearAll() async {
      let inbox = makeTester()
      let work = StoreTester(state: TodoListState(name: "Work"), mutations: TodoMutations())
      await inbox.dispatch(.add(title: "Milk"))
      await inbox.dispatch(.setDone(id: 1, isDone: true))
      Store<TodoListState>.actions.clearCompleted()
      await inbox.expect(committed: [.clearCompleted])
      await work.expect(committed: [.clearCompleted])
      inbox.expect(reading: \.items.value.isEmpty, equals: true)
      inbox.finish()
      work.finish()
    }

    @Test("on a manual executor, nothing is committed until the executor runs")
    func manual() async {
      let executor = ManualExecutor()
      let list = StoreTester(state: TodoListState(name: "Inbox"), mutations: TodoMutations(), executor: executor)
      list.actions.add("Milk")
      list.expect(reading: \.items.value.isEmpty, equals: true)
      #expect(executor.pendingCount == 1)
      await list.dispatch(.add(title: "Eggs"), committed: [.add(title: "Milk"), .add(title: "Eggs")])
      list.finish()
    }
  }
}
