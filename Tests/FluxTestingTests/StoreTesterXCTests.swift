import FluxCore
import FluxTesting
import XCTest

/// The test kit from XCTest: assertions that hold report nothing; the same calls as in Swift
/// Testing.
final class StoreTesterXCTests: XCTestCase {
  func testAssertionsFromXCTest() async {
    let tester = StoreTester<CounterState>(state: .init(), mutations: .init())
    await tester.dispatch(.add(2), reading: \.count.value, equals: 2)
    await tester.dispatch(.reset) { $0.count.value == 0 }
    tester.finish()
  }

  func testLeakTrackingFromXCTest() {
    withLeakTracking { leaks in
      let store = leaks.track(Store<CounterState>(state: .init(), mutations: .init(), executor: .immediate))
      store.actions.dispatch(action: .add(1))
    }
  }
}
