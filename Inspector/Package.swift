// swift-tools-version: 6.1
import PackageDescription

// The Flux Inspector: a page that shows the action logs of running apps and of recordings, and
// steers the apps. A package of its
// own, so its server library never reaches the users of Flux.
let package = Package(
  name: "FluxInspector",
  platforms: [.macOS(.v14)],
  dependencies: [
    .package(name: "Flux", path: ".."),
    // No traits: the inspector needs neither swift-configuration nor the parts that need all of
    // Foundation, and builds faster without them.
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
  ],
  targets: [
    .target(
      name: "FluxInspector",
      dependencies: [
        .product(name: "FluxDevtools", package: "Flux"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      resources: [.copy("Page")]
    ),
    .executableTarget(name: "flux-inspector", dependencies: ["FluxInspector"]),
    .testTarget(
      name: "FluxInspectorTests",
      dependencies: [
        "FluxInspector",
        "flux-inspector",
        .product(name: "NIOCore", package: "swift-nio"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
