// swift-tools-version: 6.2
import PackageDescription

// A store whose state publishes through OpenCombine's `CurrentValueSubject`, with FluxCore and no
// FluxReactive: `swift run --package-path Examples/OpenCombineInterop`.
let package = Package(
  name: "OpenCombineInterop",
  platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
  dependencies: [
    .package(name: "Flux", path: "../.."),
    .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
  ],
  targets: [
    .executableTarget(
      name: "OpenCombineInterop",
      dependencies: [
        .product(name: "FluxCore", package: "Flux"),
        .product(name: "OpenCombine", package: "OpenCombine"),
      ],
      swiftSettings: [.treatAllWarnings(as: .error)]
    )
  ],
  swiftLanguageModes: [.v6]
)
