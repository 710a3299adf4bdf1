/// A thread-safe mutable value whose ``signal`` delivers the current value, then every change.
///
/// ```swift
/// let variable = Variable(0)
/// variable.signal.observe { print($0) }
/// variable.value = 1
/// // prints "0"
/// // prints "1"
/// ```
///
/// Freeing the variable ends its signal and releases every observer. The value goes with the
/// last of the variable, its ``constant``s and its signals, where that one goes: the disposables
/// of observations, `Sendable` as every ``Disposable`` is, keep none of it.
///
/// > Important: A new observer receives the current value first, then every change, with no
/// > change lost or doubled even when another thread sets the value at that moment. Changes are
/// > delivered like ``Sink/send(value:)`` delivers: synchronously on the setting thread, one
/// > at a time. Reading ``value`` or setting it from inside one of its own observers works; a
/// > set made there is delivered right after the current delivery, not nested.
/// > `value += 1` is a get and a set, which another thread's change may come between; several
/// > threads that count with one variable use ``modify(_:)``, one atomic read-modify-write.
public final class Variable<Value> {
  @usableFromInline
  let core: SubjectCore<Value>
  /// Keeps the value, with the constants and signals made from this variable.
  @usableFromInline
  let owner: ValueOwner<Value>

  /// Creates a variable holding `value`.
  ///
  /// - Parameter value: The initial value.
  @inlinable
  public init(_ value: Value) {
    let core = SubjectCore(current: value) { $0.remove($1) }
    self.core = core
    owner = ValueOwner(core: core)
  }

  deinit {
    core.terminate()
  }

  /// The current value. Setting it delivers the new value to every observer.
  ///
  /// Reading it inside `withObservationTracking` (a SwiftUI `body`, say) tracks it: its next
  /// change calls `onChange`, as for a property of an `@Observable` class; see
  /// <doc:TrackingWithObservation>.
  ///
  /// A change in place, `variable.value += 1` or `try await load(&variable.value)`, is a get and
  /// then a set, as for any stored property: it delivers the result once, and it is a change, not
  /// a read (Observation does not track it). No lock is held between the get and the set, so the
  /// access may span an `await`, and may read or set this variable, or another one
  /// (`swap(&a.value, &b.value)`), on the way.
  ///
  /// > Important: Because nothing is held between the get and the set, a change in place is not
  /// > atomic: two threads that make `value += 1` at once may lose one of the two updates, and a
  /// > set made by another thread during an `await` inside the access is overwritten when it
  /// > ends. Use ``modify(_:)`` for a read-modify-write that loses nothing. A collection changed
  /// > in place this way is copied whole (the variable keeps the old value while the access
  /// > runs): change collections with ``modify(_:)``, which changes them without copying
  /// > (`variable.modify { $0.append(item) }`).
  @inlinable
  public var value: Value {
    get { core.value }
    set { core.set(newValue) }
    _modify {
      // A get and a set, with nothing held between them (rule 20): the caller may suspend here.
      var value = core.valueForChange
      defer { core.set(value) }
      yield &value
    }
  }

  /// The current value, then every change.
  @inlinable
  public var signal: Signal<Value> {
    Signal(source: .replaying(owner))
  }

  /// A read-only view of this variable.
  public var constant: Constant<Value> {
    Constant(variable: self)
  }

  /// Changes the value in one atomic read-modify-write and delivers the result once.
  ///
  /// ```swift
  /// let hits = Variable(0)
  /// DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
  ///   hits.modify { $0 += 1 }
  /// }
  /// // hits.value == 1_000
  /// ```
  ///
  /// `body` runs under the variable's lock: keep it short (a set on another thread waits for it,
  /// and so may a read, unless the value is one word or less with no references, on Linux), and
  /// change the value only through its argument. Reading, setting or
  /// observing this variable inside `body` stops the program with a message. Do not set another
  /// variable or send from `body` either: that delivery may wait for one on another thread
  /// whose observer reads this variable, and waits for `body` (a deadlock). Nor read another
  /// variable from `body` whose own `modify` body, on another thread, may read this one: each
  /// read waits for the other body (a deadlock), unless both values are one word or less with
  /// no references, on Linux. Read what you need before `modify`. Compute inside, send after
  /// `modify` returns.
  /// What `body` removes from the value and drops is freed in `body`, under the lock, so that a
  /// collection changes in place in amortized constant time; where an element's deinit must run
  /// after the lock (it reads this variable, or takes a lock of yours), return it from `body`
  /// (`let removed = items.modify { $0.popLast() }`) and it is freed when you let it go.
  /// If `body` throws, the value keeps what `body` left in it, as an `inout` argument does, and
  /// that value is delivered once, like any change: observers, bindings, ``values`` and
  /// Observation never disagree about what the variable holds.
  ///
  /// - Parameter body: Changes the value in place.
  /// - Returns: What `body` returns.
  @inlinable
  @discardableResult
  public func modify<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    try core.modify(body)
  }
}

// The core guards the value and the observers with its lock; the owner lets the value go where
// the last variable, constant or signal of it goes, which may be any thread when it is `Sendable`.
extension Variable: Sendable where Value: Sendable {}
