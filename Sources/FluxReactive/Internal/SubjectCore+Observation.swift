#if canImport(Observation)
  import Observation
#endif
#if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
  import Synchronization
#endif

// How a variable's value takes part in Observation, at the cost of one load and one branch per
// set while nobody has read it.
//
// A core has no registrar until its value is first read (`SubjectCore.observation` is empty):
// a read registers with Observation through `valueWasRead`, which makes the registrar on that
// first read. A set, a `modify` or a change in place (`value += 1`, which is not a read) loads
// `observation` once and calls the registrar (`willSet` before the change, `didSet` after it)
// only when it is there, borrowing it (no reference counted).
//
// Why no change is missed: Observation calls a tracker only for a registrar it saw during
// `withObservationTracking`'s `apply`, and it sees a registrar only through `access`, which a
// read calls after making the registrar. So any tracker of this value was installed after the
// registrar was stored, and the registrar is never removed. Every set or `modify` that comes
// after that store finds the registrar and calls `willSet` and `didSet`: elsewhere the store and
// the set's load both hold `valueLock`; on Linux `observation` is an atomic word holding the
// registrar's address, stored by a compare-and-exchange and loaded with acquire ordering, since
// a reader of a value in a word (`SubjectCore+Word`) holds no lock. A change made between a read
// and the end of `apply` reaches no tracker, exactly as with an `@Observable` class: Observation
// installs the tracker when `apply` returns.
//
// A set that races a tracker which has read but is not installed yet loses nothing either: the
// set's only decision is "is there a registrar", never "has anyone read since the last change".
// Once the tracker's read has stored the registrar, every later set calls `willSet`, the one
// that runs before the install (which Observation itself lets go by, as above) and every one
// after it, which finds the tracker. A scheme that skipped `willSet` when no read came since the
// last change would lose exactly that update: read, set (clears the mark, no tracker yet),
// install, set (skipped). `ObservationRaceTests` runs that interleaving on several threads.
//
// Why a set after a read pays for Observation even when nobody tracks: through Observation's
// public API a read inside `withObservationTracking` and a read outside it are the same call
// (`access` returns nothing, and the tracking in progress is thread-local state that
// Observation does not export: `_swift_observation_tls_get` is a local symbol of
// libswiftObservation), and the install happens at a moment no callback reports, as late as the
// tracking closure likes. So after any read, a set cannot rule out a tracker installed since,
// and must call `willSet`; and it cannot learn that the trackers are gone, since a tracker
// installed later may come from a read made earlier. A set after a read therefore costs what
// an `@Observable` class's set costs (`willSet`, `didSet`) plus the delivery; Benchmarks' W3r
// measures it against that floor. What Flux controls: none of its own reads is a read
// (replaying the current value to a new observer, `modify`, a change in place, bindings and
// `values` use the stored value), so a store whose mutations write `value += 1` never makes a
// registrar until a view reads.

#if canImport(Observation)
  /// The registrar of one variable's value, made when the value is first read.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  final class ValueRegistration: Observable, Sendable {
    /// Where Observation records the trackers of this value.
    let registrar = ObservationRegistrar()

    /// The one tracked property: the variable's value, which lives in the core.
    var value: Void { () }

    /// `\.value`, made once: a key path literal costs a runtime call each time it is evaluated.
    static let valueKeyPath: KeyPath<ValueRegistration, Void> & Sendable = \.value

    /// ``valueKeyPath``, kept by each registration too, so that a set loads it with no check
    /// that the static one was made.
    let keyPath = ValueRegistration.valueKeyPath
  }
#endif

extension SubjectCore {
  /// Observation's registrar for the value, if a read has made it.
  @usableFromInline
  var registration: AnyObject? {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      let address = observation.load(ordering: .acquiring)
      guard address != 0 else { return nil }
      return Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
        .takeUnretainedValue()
    #else
      observation
    #endif
  }

  /// Whether a read has made Observation's registrar: one load.
  @inlinable
  var isObserved: Bool {
    #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
      observation.load(ordering: .acquiring) != 0
    #else
      observation != nil
    #endif
  }

  /// Tells Observation that the value was read, making the registrar on the first read. Called
  /// with `valueLock` held, or with no lock for a value in a word (on Linux, where the registrar
  /// is published by a compare-and-exchange); cheap (a thread-local load) when no tracking is
  /// under way.
  @usableFromInline
  func valueWasRead() {
    #if canImport(Observation)
      if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
        let registration: ValueRegistration
        #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
          if let existing = self.registration {
            registration = unsafeDowncast(existing, to: ValueRegistration.self)
          } else {
            let made = ValueRegistration()
            let address = UInt(bitPattern: Unmanaged<AnyObject>.passRetained(made).toOpaque())
            let (stored, winner) = observation.compareExchange(
              expected: 0, desired: address, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if stored {
              registration = made
            } else {
              Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped).release()
              registration = unsafeDowncast(
                Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: winner).unsafelyUnwrapped)
                  .takeUnretainedValue(), to: ValueRegistration.self)
            }
          }
        #else
          if let observation {
            registration = unsafeDowncast(observation, to: ValueRegistration.self)
          } else {
            registration = ValueRegistration()
            observation = registration
          }
        #endif
        registration.registrar.access(registration, keyPath: ValueRegistration.valueKeyPath)
      }
    #endif
  }

  /// Tells Observation that the value is about to change: its trackers' `onChange` run here, on
  /// the setting thread. Called with `lock` held, never `valueLock`, once `observation` was found.
  @usableFromInline
  func valueWillChange() {
    // A set of this value from its own tracker's `onChange` would call that `onChange` again,
    // nested, without end (Observation removes a tracker only after its `onChange` returns).
    if isNotifyingObservation { Self.setInsideOnChange() }
    isNotifyingObservation = true
    defer { isNotifyingObservation = false }
    #if canImport(Observation)
      if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
        withRegistration { $0.registrar.willSet($0, keyPath: $0.keyPath) }
      }
    #endif
  }

  /// Stops the program: this value was set from its own tracker's `onChange`.
  static func setInsideOnChange() -> Never {
    fatalError(
      "Flux: a Variable was set from inside the onChange of a withObservationTracking that read it; "
        + "onChange runs before the change is stored: schedule the set instead (on the main queue, say).")
  }

  /// Tells Observation that the value has changed. Called like ``valueWillChange()``.
  @usableFromInline
  func valueDidChange() {
    #if canImport(Observation)
      if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
        withRegistration { $0.registrar.didSet($0, keyPath: $0.keyPath) }
      }
    #endif
  }

  #if canImport(Observation)
    /// Calls `body` with Observation's registrar for the value, if a read has made it, borrowed:
    /// the core keeps it until its own end, so no reference is counted on a set's path.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @inline(__always)
    private func withRegistration(_ body: (ValueRegistration) -> Void) {
      #if os(Linux) && canImport(Synchronization) && !FLUX_PORTABLE
        let address = observation.load(ordering: .acquiring)
        guard address != 0 else { return }
        Unmanaged<ValueRegistration>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
          ._withUnsafeGuaranteedRef(body)
      #else
        if let observation { body(unsafeDowncast(observation, to: ValueRegistration.self)) }
      #endif
    }
  #endif
}
