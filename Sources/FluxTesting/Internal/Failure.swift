#if canImport(Testing)
  import Testing
#endif
#if canImport(XCTest)
  import XCTest
#endif

/// Where a test kit call was written: the caller's `#fileID`, `#filePath`, `#line` and
/// `#column`, so a failure points at the test, not at the kit.
struct CallSite: Sendable {
  let fileID: StaticString
  let filePath: StaticString
  let line: UInt
  let column: UInt

  /// `Module/File.swift:12`.
  var description: String {
    "\(fileID):\(line)"
  }
}

/// The test library a test kit object reports to: the one whose test made it.
///
/// Taken when the object is made, on the test's own task, so that an assertion made elsewhere
/// (in a detached task, a callback on a queue), where Swift Testing knows no current test,
/// still fails the run instead of going to XCTest, which ignores it there.
enum Harness: Sendable {
  case swiftTesting
  case xcTest

  /// Swift Testing if a Swift Testing test runs on this task, XCTest otherwise.
  static var current: Harness {
    #if canImport(Testing)
      if Test.current != nil { return .swiftTesting }
    #endif
    return .xcTest
  }
}

/// Fails the running test with `message`, at `site`: through Swift Testing when a Swift
/// Testing test is running on this task, or when `harness` is Swift Testing; otherwise
/// through XCTest.
func fail(_ message: String, at site: CallSite, harness: Harness) {
  #if canImport(Testing)
    if Test.current != nil || harness == .swiftTesting {
      let location = SourceLocation(
        fileID: "\(site.fileID)", filePath: "\(site.filePath)", line: Int(site.line), column: Int(site.column))
      Issue.record(Comment(rawValue: message), sourceLocation: location)
      return
    }
  #endif
  #if canImport(XCTest)
    XCTFail(message, file: site.filePath, line: site.line)
  #else
    print("\(site.description): error: \(message)")
  #endif
}
