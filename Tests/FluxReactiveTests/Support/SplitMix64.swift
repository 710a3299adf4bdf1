/// A small, seeded, deterministic random number generator (SplitMix64), so that a failing
/// random program can be replayed from the seed it prints.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  /// `true` with probability `numerator / denominator`.
  mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
    Int.random(in: 0..<denominator, using: &self) < numerator
  }
}
