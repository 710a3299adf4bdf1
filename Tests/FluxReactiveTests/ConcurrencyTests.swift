import Dispatch
import FluxCore
import FluxReactive
import Testing

// Sinks, variables and stores used from the tasks of a TaskGroup, in Swift 6 language mode:
// everything crosses task boundaries as Sendable values, with no unchecked escape hatch in
// the test code.

private let taskCount = 32
private let perTask = 50

/// A counter state whose commits record whether two of them ever overlapped.
private final class TaskCounterState: State {
  typealias Action = TaskCounterAction
  typealias Mutations = TaskCounterMutations

  let count = Variable(0)
  let activeCommits = LockedValue(0)
  let overlaps = LockedValue(0)
}

private enum TaskCounterAction: Sendable {
  case increment
}

private struct TaskCounterMutations: Mutations {
  func commit(action: TaskCounterAction, state: TaskCounterState) {
    let active = state.activeCommits.withLock { active in
      active += 1
      return active
    }
    if active > 1 { state.overlaps.withLock { $0 += 1 } }
    state.count.value += 1
    state.activeCommits.withLock { $0 -= 1 }
  }
}

/// The state of the global-dispatch test, apart from every other test's state type.
private final class TaskBroadcastState: State {
  typealias Action = TaskCounterAction
  typealias Mutations = TaskBroadcastMutations

  let count = Variable(0)
}

private struct TaskBroadcastMutations: Mutations {
  func commit(action: TaskCounterAction, state: TaskBroadcastState) {
    state.count.value += 1
  }
}

@Suite("Concurrency: sinks, variables and stores from many tasks")
struct ConcurrencyTests {
  @Test("inv3_sendsFromManyTasksReachTheObserverOnceEachInEachTasksOrder")
  func inv3_sendsFromManyTasksReachTheObserverOnceEachInEachTasksOrder() async {
    let sink = Sink<Int>()
    let received = LockedValue<[Int]>([])
    let observation = sink.signal.observe { value in received.withLock { $0.append(value) } }
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<taskCount {
        group.addTask {
          for index in 0..<perTask { sink.send(value: task * perTask + index) }
        }
      }
    }
    observation.dispose()
    let values = received.current
    #expect(values.sorted() == Array(0..<taskCount * perTask))
    for task in 0..<taskCount {
      let sent = values.filter { $0 / perTask == task }
      #expect(sent == sent.sorted(), "task \(task) out of order")
    }
  }

  @Test("inv5_modifyFromManyTasksLosesNoUpdateAndStreamsSeeEveryChangeInOrder")
  func inv5_modifyFromManyTasksLosesNoUpdateAndStreamsSeeEveryChangeInOrder() async {
    let variable = Variable(0)
    let total = taskCount * perTask
    let observed = LockedValue<[Int]>([])
    let observation = variable.signal.observe { value in observed.withLock { $0.append(value) } }
    let streamed = await withTaskGroup(of: [Int].self) { group in
      for _ in 0..<4 {
        // Each stream is made here, so it starts before any change and misses none.
        let values = variable.values
        group.addTask {
          var seen: [Int] = []
          for await value in values {
            seen.append(value)
            if value == total { break }
          }
          return seen
        }
      }
      for _ in 0..<taskCount {
        group.addTask {
          for _ in 0..<perTask { variable.modify { $0 += 1 } }
          return []
        }
      }
      return await group.reduce(into: []) { $0.append($1) }.filter { !$0.isEmpty }
    }
    observation.dispose()
    #expect(variable.value == total)
    #expect(observed.current == Array(0...total))
    #expect(streamed.count == 4)
    for seen in streamed { #expect(seen == Array(0...total)) }
  }

  @Test("inv10_storeOnImmediateCommitsEveryDispatchFromManyTasksWithoutOverlap")
  func inv10_storeOnImmediateCommitsEveryDispatchFromManyTasksWithoutOverlap() async {
    let state = TaskCounterState()
    let store = Store<TaskCounterState>(state: state, mutations: .init(), executor: .immediate)
    let counts = state.count.values
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<taskCount {
        group.addTask {
          for _ in 0..<perTask { store.actions.dispatch(action: .increment) }
        }
      }
    }
    // On .immediate every commit is done when the last dispatch has returned.
    #expect(state.count.value == taskCount * perTask)
    #expect(state.overlaps.current == 0)
    var seen: [Int] = []
    for await count in counts {
      seen.append(count)
      if count == taskCount * perTask { break }
    }
    #expect(seen == Array(0...taskCount * perTask))
  }

  @Test("inv10_storeOnAGlobalQueueCommitsEveryDispatchFromManyTasksWithoutOverlap")
  func inv10_storeOnAGlobalQueueCommitsEveryDispatchFromManyTasksWithoutOverlap() async {
    let state = TaskCounterState()
    let store = Store<TaskCounterState>(state: state, mutations: .init(), executor: .queue(.global()))
    let counts = state.count.values
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<taskCount {
        group.addTask {
          for _ in 0..<perTask { store.actions.dispatch(action: .increment) }
        }
      }
    }
    // The commits run later on the queue: wait for the last one through the stream.
    var seen: [Int] = []
    for await count in counts {
      seen.append(count)
      if count == taskCount * perTask { break }
    }
    #expect(seen == Array(0...taskCount * perTask))
    #expect(state.overlaps.current == 0)
    withExtendedLifetime(store) {}
  }

  @Test("inv11_globalDispatchFromManyTasksReachesEveryLiveStoreOfTheStateType")
  func inv11_globalDispatchFromManyTasksReachesEveryLiveStoreOfTheStateType() async {
    let immediate = TaskBroadcastState()
    let queued = TaskBroadcastState()
    let stores = [
      Store<TaskBroadcastState>(state: immediate, mutations: .init(), executor: .immediate),
      Store<TaskBroadcastState>(state: queued, mutations: .init(), executor: .queue(.global())),
    ]
    let total = taskCount * perTask
    let queuedCounts = queued.count.values(bufferingPolicy: .bufferingNewest(1))
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<taskCount {
        group.addTask {
          for _ in 0..<perTask { Store<TaskBroadcastState>.actions.dispatch(action: .increment) }
        }
      }
    }
    #expect(immediate.count.value == total)
    for await count in queuedCounts where count == total { break }
    #expect(queued.count.value == total)
    withExtendedLifetime(stores) {}
  }
}
