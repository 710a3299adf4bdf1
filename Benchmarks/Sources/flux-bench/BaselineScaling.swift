/// The scaling curves written as the cheapest correct code, where it has an equivalent: the
/// baseline's sink and its registry of stores (none runs work on a queue).
enum BaselineScaling {
  static func point(_ curve: Curve, size: Int, tally: Tally) -> ScalingPoint {
    switch curve {
    case .send: return ScalingPoint(prepared: BaselineWorkloads.sends(observers: size, tally: tally))
    case .global: return liveStores(size) { BaselineWorkloads.globalDispatch(to: size, tally: tally) }
    case .churn: return churn(standing: size, tally: tally)
    case .queue, .main: preconditionFailure("the baseline has no \(curve.name) curve")
    }
  }

  /// Add + remove beside `count` standing observers, whose memory ``standing(_:_:)`` measures.
  private static func churn(standing count: Int, tally: Tally) -> ScalingPoint {
    let sink = BaselineSink()
    let (keys, bytesPerItem) = standing(count) { sink.add { tally.add($0) } }
    let prepared = BaselineWorkloads.churn(on: sink, keeping: keys, count: count, tally: tally)
    return ScalingPoint(prepared: prepared, bytesPerItem: bytesPerItem)
  }
}
