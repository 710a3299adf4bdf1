import FluxCore
import FluxTesting
import Testing

@Suite("TimeTravel")
struct TimeTravelTests {
  @Test("goTo(k) sets a live store to its state after the first k actions of the recording")
  func goTo() async throws {
    let travel = try TimeTravel(try ReplayTests.session(), label: "a", from: CounterState(), mutations: .init())
    // The session: a +2, b =10, a -5 (cancelled), b +1, a +3.
    #expect(travel.count == 5)
    #expect(travel.snapshots == [0, 2, 2, 2, 2, 5])
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    tester.actions.dispatch(action: .set(99))
    await tester.expect(committed: [.set(99)])
    await travel.goTo(1, in: tester.store)
    await tester.expect(committed: [.set(2)])
    tester.expect(reading: \.count.value, equals: 2)
    await travel.goTo(5, in: tester.store)
    tester.expect(reading: \.count.value, equals: 5)
    await travel.goTo(0, in: tester.store)
    await tester.expect(committed: [.set(5), .set(0)])
    tester.finish()
  }
}
