import Dispatch
import OpenCombine
import OpenCombineDispatch

/// The scaling curves written with OpenCombine's subjects, `sink` and `receive(on:)`.
enum OpenCombineScaling {
  static func point(_ curve: Curve, size: Int, tally: Tally) -> ScalingPoint {
    switch curve {
    // A global dispatch is one subject fanned out to one subscriber per store, as in W7.
    case .send: return ScalingPoint(prepared: OpenCombineWorkloads.sends(observers: size, tally: tally))
    case .global: return liveStores(size) { OpenCombineWorkloads.sends(observers: size, tally: tally) }
    case .churn: return churn(standing: size, tally: tally)
    case .queue: return ScalingPoint(prepared: batches(of: size, on: DispatchQueue(label: "opencombine"), tally: tally))
    case .main: return ScalingPoint(prepared: batches(of: size, on: .main, tally: tally))
    }
  }

  /// Subscribe + dispose beside `count` standing observers, whose memory ``standing(_:_:)``
  /// measures.
  private static func churn(standing count: Int, tally: Tally) -> ScalingPoint {
    let subject = PassthroughSubject<Int, Never>()
    let (subscriptions, bytesPerItem) = standing(count) { subject.sink { tally.add($0) } }
    let prepared = OpenCombineWorkloads.churn(on: subject, keeping: subscriptions, count: count, tally: tally)
    return ScalingPoint(prepared: prepared, bytesPerItem: bytesPerItem)
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
