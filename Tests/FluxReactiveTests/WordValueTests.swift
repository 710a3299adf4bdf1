import Dispatch
import FluxCore
import Foundation
import Testing

@testable import FluxReactive

/// Values of one word or less with no references (`Int`, `Bool`, small enums) are read from an
/// atomic word on Linux, without a lock; every other value through the value lock. Both keep
/// rule 3: a read never waits for a delivery.
@Suite("Values read without a lock")
struct WordValueTests {
  @Test("which values live in a word: one word or less, no references, and only on Linux")
  func whichValuesUseAWord() {
    #if os(Linux) && !FLUX_PORTABLE
      #expect(SubjectCore<Int>.usesWord)
      #expect(SubjectCore<Bool>.usesWord)
      #expect(SubjectCore<Double>.usesWord)
    #else
      #expect(!SubjectCore<Int>.usesWord)
    #endif
    #expect(SubjectCore<Int>.usesWord == CodePath.usesAtomics, "a value in a word on the lock-free path only")
    #expect(!SubjectCore<Int?>.usesWord, "nine bytes")
    #expect(!SubjectCore<String>.usesWord, "holds a reference")
    #expect(!SubjectCore<[Int]>.usesWord)
    #expect(!SubjectCore<Counter>.usesWord)
  }

  @Test("inv3: readers on other threads see whole values, each one that was set, while writers set")
  func inv3_readersSeeWholeValues() {
    // Each value carries its index in both halves: a torn read would not.
    let variable = Variable(UInt64(0))
    let torn = Counter()
    let finished = finishOnThreads(4, within: 60) { thread in
      for index in UInt64(1)...20_000 {
        if thread < 2 {
          variable.value = index << 32 | index
        } else {
          let value = variable.value
          if value >> 32 != value & 0xFFFF_FFFF { torn.increment() }
        }
      }
    }
    #expect(finished)
    #expect(torn.value == 0)
    #expect(variable.value == 20_000 << 32 | 20_000)
  }

  #if os(Linux) && !FLUX_PORTABLE
    @Test("inv3: a read on another thread gets the value from before a running modify body, at once")
    func inv3_readDuringAnotherThreadsModifyBody() {
      let variable = Variable(1)
      let inBody = DispatchSemaphore(value: 0)
      let readDone = DispatchSemaphore(value: 0)
      let modified = DispatchSemaphore(value: 0)
      Thread {
        variable.modify { value in
          value = 2
          inBody.signal()
          _ = readDone.wait(timeout: .now() + 10)
        }
        modified.signal()
      }.start()
      inBody.wait()
      let read = variable.value  // would wait out the body's 10 seconds if it took a lock
      readDone.signal()
      modified.wait()
      #expect(read == 1)
      #expect(variable.value == 2)
    }
  #endif

  @Test("inv3: two variables holding strings, whose observers read each other's value, never deadlock")
  func inv3_readingALockedValueNeverWaitsForDelivery() {
    if let last = setTwoVariablesReadingEachOther(from: "", { String($0) }) {
      #expect(last.0 == "5000" && last.1 == "5000")
    }
  }

  @Test("inv8: Observation's registrar goes with its variable")
  func inv8_registrarGoesWithItsVariable() {
    weak var registration: AnyObject?
    do {
      let variable = Variable(0)
      _ = variable.value  // makes the registrar
      registration = variable.core.registration
      #expect(registration != nil)
    }
    #expect(registration == nil)
  }
}
