// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of Flux against OpenCombine and a hand-written baseline. A package of its own, so
// its dependencies never reach the users of Flux.
let package = Package(
  name: "FluxBenchmarks",
  platforms: [.macOS(.v15)],  // the baseline's lock is a `Synchronization.Atomic`
  dependencies: [
    .package(name: "Flux", path: ".."),
    .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
  ],
  targets: [
    .target(name: "MallocCounter"),
    .executableTarget(
      name: "flux-bench",
      dependencies: [
        "MallocCounter",
        .product(name: "FluxCore", package: "Flux"),
        .product(name: "FluxReactive", package: "Flux"),
        .product(name: "FluxDevtools", package: "Flux"),
        .product(name: "OpenCombine", package: "OpenCombine"),
        .product(name: "OpenCombineDispatch", package: "OpenCombine"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
