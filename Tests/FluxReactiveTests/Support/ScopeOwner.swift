/// An object whose lifetime bounds a scoped observation: `Sendable`, as
/// `observe(duringScopeOf:)` asks.
final class ScopeOwner: Sendable {}
