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

/// Fails the running test with `message`, at `site`: through Swift Testing when a Swift
/// Testing test is running on this task, otherwise through XCTest.
func fail(_ message: String, at site: CallSite) {
  #if canImport(Testing)
    if Test.current != nil {
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
