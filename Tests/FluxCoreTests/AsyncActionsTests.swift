import Dispatch
import FluxCore
import Foundation
import Testing

final class ProfileState: State, @unchecked Sendable {
  typealias Action = ProfileAction
  typealias Mutations = ProfileMutations

  private let lock = NSLock()
  // Guarded by `lock`.
  private var storedName: String?

  var name: String? { lock.withLock { storedName } }

  fileprivate func set(_ name: String?) { lock.withLock { storedName = name } }
}

enum ProfileAction: Sendable {
  case loading
  case loaded(String)
}

struct ProfileMutations: Mutations {
  func commit(action: ProfileAction, state: ProfileState) {
    switch action {
    case .loading: state.set(nil)
    case .loaded(let name): state.set(name)
    }
  }
}

/// Stands in for a network request that the test finishes by hand.
actor FakeBackend {
  private var waiting: [CheckedContinuation<String, Never>] = []

  func fetchName() async -> String {
    await withCheckedContinuation { waiting.append($0) }
  }

  var pendingCount: Int { waiting.count }

  func respond(_ name: String) {
    for continuation in waiting { continuation.resume(returning: name) }
    waiting.removeAll()
  }
}

extension Actions where State == ProfileState {
  /// The documented async action pattern: do async work, then dispatch.
  func load(from backend: FakeBackend) async {
    dispatch(action: .loading)
    let name = await backend.fetchName()
    dispatch(action: .loaded(name))
  }
}

@Suite("Async actions")
struct AsyncActionsTests {
  @Test("an async action dispatches when its work is done")
  func asyncActionDispatches() async {
    let backend = FakeBackend()
    let state = ProfileState()
    let store = Store(state: state, mutations: .init(), executor: .queue(.global()))
    async let loading: Void = store.actions.load(from: backend)
    while await backend.pendingCount == 0 { await Task.yield() }
    await backend.respond("Ada")
    await loading
    #expect(await store.actions.dispatchAndWait(action: .loaded("Ada")))
    #expect(state.name == "Ada")
  }

  @Test("a store freed while its async action runs: no crash, the late dispatch does nothing")
  func storeFreedDuringAsyncAction() async {
    let backend = FakeBackend()
    let state = ProfileState()
    var store: Store<ProfileState>? = Store(state: state, mutations: .init(), executor: .immediate)
    let actions = store!.actions
    let task = Task { await actions.load(from: backend) }
    while await backend.pendingCount == 0 { await Task.yield() }
    store = nil
    await backend.respond("Grace")
    await task.value
    #expect(state.name == nil)
    #expect(await actions.dispatchAndWait(action: .loaded("late")) == false)
  }

  @Test("many tasks dispatch into one store; every action is committed once")
  func taskGroupDispatch() async {
    enum Tag {}
    let state = LogState<Tag>()
    let store = Store(state: state, mutations: .init(), executor: .queue(.global()))
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<50 {
        group.addTask {
          for index in 0..<20 { store.actions.dispatch(action: task * 100 + index) }
          await store.actions.dispatchAndWait(action: task * 100 + 99)
        }
      }
    }
    #expect(state.committed.values.count == 50 * 21)
    #expect(Set(state.committed.values).count == 50 * 21)
    #expect(state.overlapCount == 0)
  }
}
