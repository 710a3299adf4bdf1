#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization

  /// The registries of every state type met so far, found by the type's identity without a
  /// lock: `Store<S>.actions` costs a hash and two loads, and no global dispatch waits for code
  /// that registers stores, or dispatches, of another type.
  ///
  /// An open-addressing table (linear probing) that only grows: a registry, once made, lives as
  /// long as the process and never changes its identity (``Registries`` keeps every one), so an
  /// entry, once written, never changes either, and the table holds each registry by an
  /// unretained address. Writers take ``Registries``' lock; readers take nothing:
  /// - An entry's value is written before its key, and the key with release ordering; a reader
  ///   loads the key with acquire ordering, so a key it finds comes with its value.
  /// - Past half full, the writer copies the entries into a table twice the size and publishes
  ///   it (release). The old table stays allocated, its entries intact, for readers still in it:
  ///   what they find there is still true, and what they miss they look up under the lock.
  ///   Every table is kept in ``Registries``' list of them and never freed; the old ones add up
  ///   to less than the current one.
  @usableFromInline
  final class RegistryTable {
    /// Where each entry's key and value sit: `2 × capacity` words, key then value.
    @usableFromInline
    typealias Words = UnsafeMutablePointer<Atomic<UInt>>

    /// The entries: `capacity` pairs of words.
    @usableFromInline
    let words: Words
    /// `capacity - 1`; the capacity is a power of two.
    @usableFromInline
    let mask: Int
    /// The number of bits of the hash used: `log2(capacity)`.
    @usableFromInline
    let bits: Int
    /// The entries in use. Guarded by ``Registries``' lock, like every write here.
    private var count = 0

    init(bits: Int) {
      self.bits = bits
      mask = (1 << bits) - 1
      words = .allocate(capacity: 2 << bits)
      for index in 0..<(2 << bits) { (words + index).initialize(to: Atomic(0)) }
    }

    // Never runs for the tables of ``Registries``, which keeps every one.
    deinit {
      words.deinitialize(count: 2 << bits)
      words.deallocate()
    }

    /// The position `type` hashes to: the top bits of its address times the golden ratio.
    @inlinable
    func home(of type: UInt) -> Int {
      Int(truncatingIfNeeded: (type &* 0x9E37_79B9_7F4A_7C15) >> UInt(64 - bits))
    }

    /// The registry of `type`, or `nil` if this table has no entry for it (yet).
    @inlinable
    func registry(for type: UInt) -> UnsafeMutableRawPointer? {
      var index = home(of: type)
      while true {
        let key = words[index << 1].load(ordering: .acquiring)
        if key == type {
          return UnsafeMutableRawPointer(bitPattern: words[index << 1 | 1].load(ordering: .relaxed))
        }
        if key == 0 { return nil }
        index = (index &+ 1) & mask
      }
    }

    /// Whether one more entry keeps the table at most half full.
    var hasRoom: Bool { (count + 1) * 2 <= mask + 1 }

    /// Adds `registry` as the registry of `type`, which has no entry yet. With the lock held,
    /// and room.
    func insert(_ registry: UnsafeMutableRawPointer, for type: UInt) {
      guard type != 0 else { fatalError("Flux: a type's identity is never zero.") }
      var index = home(of: type)
      while words[index << 1].load(ordering: .relaxed) != 0 { index = (index &+ 1) & mask }
      words[index << 1 | 1].store(UInt(bitPattern: registry), ordering: .relaxed)
      words[index << 1].store(type, ordering: .releasing)  // publishes the value above
      count += 1
    }

    /// A table twice the size with the same entries.
    func grown() -> RegistryTable {
      let grown = RegistryTable(bits: bits + 1)
      for index in 0...mask {
        let key = words[index << 1].load(ordering: .relaxed)
        guard key != 0 else { continue }
        let value = words[index << 1 | 1].load(ordering: .relaxed)
        grown.insert(UnsafeMutableRawPointer(bitPattern: value).unsafelyUnwrapped, for: key)
      }
      return grown
    }
  }
#endif
