import Dispatch
import OpenCombine
import OpenCombineDispatch

/// The scaling curves written with OpenCombine's subjects, `sink` and `receive(on:)`.
enum OpenCombineScaling {
  static func point(_ curve: Curve, size: Int, tally: Tally) -> ScalingPoint {
    switch curve {
    // A global dispatch is one subject fanned out to one subscriber per store, as in W7.
    case .send, .global: return ScalingPoint(prepared: sends(observers: size, tally: tally))
    case .churn: return churn(standing: size, tally: tally)
    case .queue: return ScalingPoint(prepared: batches(of: size, on: DispatchQueue(label: "opencombine"), tally: tally))
    case .main: return ScalingPoint(prepared: batches(of: size, on: .main, tally: tally))
    }
  }

  private static func sends(observers: Int, tally: Tally) -> Prepared {
    let subject = PassthroughSubject<Int, Never>()
    let cancellables = (0..<observers).map { _ in subject.sink { tally.add($0) } }
    return Prepared(
      run: { range in
        for value in range { subject.send(value) }
      },
      expected: { range in withExtendedLifetime(cancellables) { sum(range) &* observers } }
    )
  }

  /// The standing observers' handles live in a pre-touched holder, as in Flux's.
  private static func churn(standing count: Int, tally: Tally) -> ScalingPoint {
    let subject = PassthroughSubject<Int, Never>()
    let standing = Holder<AnyCancellable>(capacity: count)
    let residentBefore = residentBytes()
    for _ in 0..<count {
      standing.append(subject.sink { tally.add($0) })
    }
    let residentAfter = residentBytes()
    let prepared = Prepared(
      run: { range in
        for _ in range {
          let cancellable = subject.sink { tally.add($0) }
          cancellable.cancel()
        }
      },
      expected: { _ in 0 },
      finish: {
        withExtendedLifetime(standing) { subject.send(7) }
        return 7 &* count
      }
    )
    return ScalingPoint(prepared: prepared, bytesPerItem: Double(residentAfter - residentBefore) / Double(count))
  }

  /// A subject received on `queue`; each operation sends `size` values from the calling thread
  /// and waits until the last of them has been received.
  private static func batches(of size: Int, on queue: DispatchQueue, tally: Tally) -> Prepared {
    let committed = DispatchSemaphore(value: 0)
    let subject = PassthroughSubject<Int, Never>()
    let cancellable = subject.receive(on: queue.ocombine).sink { value in
      tally.add(value)
      if tally.total % size == 0 { committed.signal() }
    }
    return Prepared(
      run: { range in
        for _ in range {
          for _ in 0..<size { subject.send(1) }
          committed.wait()
        }
      },
      expected: { range in withExtendedLifetime(cancellable) { range.count &* size } }
    )
  }
}
