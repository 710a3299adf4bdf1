// swift-tools-version: 6.1
import PackageDescription

// `TODO_WRONG_MUTATION=1 swift test …` builds todo with a mutation that is deliberately wrong:
// `.ci/session-test` checks that a test generated from a session fails on it, at the right action.
let todoSettings: [SwiftSetting] =
  Context.environment["TODO_WRONG_MUTATION"] == nil ? [] : [.define("TODO_WRONG_MUTATION")]

let package = Package(
  name: "Flux",
  platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
  products: [
    .library(name: "FluxCore", targets: ["FluxCore"]),
    .library(name: "FluxReactive", targets: ["FluxReactive"]),
    .library(name: "FluxTesting", targets: ["FluxTesting"]),
    .library(name: "FluxDevtools", targets: ["FluxDevtools"]),
  ],
  dependencies: [],
  targets: [
    .target(name: "FluxCore"),
    .target(name: "FluxReactive", dependencies: ["FluxCore"]),
    // The devtools import Foundation; the test kit also XCTest and Testing, and re-exports them.
    .target(name: "FluxDevtools", dependencies: ["FluxCore"]),
    .target(name: "FluxTesting", dependencies: ["FluxCore", "FluxReactive", "FluxDevtools"]),
    .testTarget(name: "FluxCoreTests", dependencies: ["FluxCore"]),
    .testTarget(name: "FluxReactiveTests", dependencies: ["FluxReactive", "FluxCore"]),
    .testTarget(name: "FluxTestingTests", dependencies: ["FluxTesting", "FluxReactive", "FluxCore"]),
    .testTarget(name: "TodoTests", dependencies: ["todo", "FluxTesting", "FluxReactive", "FluxCore"]),

    // Tests generated from todo sessions, recorded and live (`.ci/session-test` makes and checks them).
    .testTarget(
      name: "TodoSessionTests", dependencies: ["todo", "FluxTesting"], exclude: ["session.jsonl", "live-session.jsonl"]),

    // Examples: `swift run todo`, `swift run Counter`, … (README.md, "Examples").
    .executableTarget(
      name: "todo", dependencies: ["FluxCore", "FluxReactive", "FluxDevtools"], path: "Examples/Todo",
      swiftSettings: todoSettings),
    .executableTarget(name: "Counter", dependencies: ["FluxCore", "FluxReactive"], path: "Examples/Counter"),
    .executableTarget(name: "EventBus", dependencies: ["FluxCore"], path: "Examples/EventBus"),
    .executableTarget(name: "BringYourOwnReactive", dependencies: ["FluxCore"], path: "Examples/BringYourOwnReactive"),
    .executableTarget(name: "QuickStart", dependencies: ["FluxCore", "FluxReactive"], path: "Examples/QuickStart"),
    .executableTarget(name: "Observing", dependencies: ["FluxCore", "FluxReactive"], path: "Examples/Observing"),
  ],
  swiftLanguageModes: [.v6]
)
