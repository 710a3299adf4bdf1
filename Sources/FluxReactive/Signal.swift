/// A push-driven stream of values over time, observed with ``observe(_:)``.
///
/// Get one from a ``Sink``, a ``Variable`` or a ``Constant``, or make one from a producer:
///
/// ```swift
/// let signal = sink.signal
/// signal.observe { print("1: \($0)") }
/// signal.observe { print("2: \($0)") }
/// sink.send(value: 100)
/// // prints "1: 100"
/// // prints "2: 100"
/// ```
///
/// A signal is a value: copying it is cheap, and it keeps its source alive but never its
/// observers' owners.
///
/// > Important: Observers run on the thread that sends the value, one value at a time per
/// > observation. Any thread may send, so an observer is `@Sendable`: the compiler rejects one
/// > that captures non-`Sendable` state. Use ``observe(on:)`` to move delivery to an
/// > `Executor`, and ``observe(on:_:)`` with ``Isolation/mainActor`` to observe with a closure
/// > isolated to the main actor (a view model's or a view controller's).
public struct Signal<Value> {
  /// What starts one observation of a producer signal: called with the function that delivers
  /// each value, it returns the disposable that ends the observation.
  public typealias Producer = @Sendable (@escaping @Sendable (Value) -> Void) -> any Disposable

  @usableFromInline
  enum Source {
    /// A sink's core: its observers get the values sent after they were added.
    case subject(SubjectCore<Value>)
    /// The owner of a variable's or a constant's value: its observers get the current value
    /// first.
    case replaying(ValueOwner<Value>)
    /// A producer from the user: Flux gates the observer it hands over.
    case producer(Producer)
    /// A producer of Flux's own operators, whose observer is only ever called from inside
    /// observations that are themselves gated, so needs no gate of its own.
    case forwarding(Producer)
  }

  @usableFromInline
  let source: Source

  @inlinable
  init(source: Source) {
    self.source = source
  }

  /// A signal from a producer that gates its observer itself: one that calls it only from
  /// inside observations that stop calling once disposed (an operator built on `observe`).
  @inlinable
  static func forwarding(_ producer: @escaping Producer) -> Signal {
    Signal(source: .forwarding(producer))
  }

  /// Creates a signal whose observations are started by `producer`.
  ///
  /// `producer` runs once per observation with a function to call for each value, and returns
  /// the disposable that ends that observation.
  ///
  /// ```swift
  /// let numbers = Signal<Int> { send in
  ///   send(1)
  ///   send(2)
  ///   return AnyDisposable()
  /// }
  /// ```
  ///
  /// The function handed to `producer` is gated: once the observation's disposable has been
  /// disposed, calling it does nothing, whatever the producer does; a call in flight on another
  /// thread finishes before `dispose()` returns. Values sent while `producer` runs arrive.
  ///
  /// The disposable `producer` returns is disposed once, by the first `dispose()` of the
  /// observation. Called from inside the observer, that `dispose()` leaves it for the end of
  /// the observer's current call: disposing it may wait for another thread that is itself
  /// waiting for that call. So an observer that disposes its own observation must not wait,
  /// in the same call, for what the producer's disposable does.
  ///
  /// - Parameter producer: Starts one observation.
  @inlinable
  public init(_ producer: @escaping Producer) {
    source = .producer(producer)
  }

  /// Calls `observer` with every value, until the returned disposable is disposed.
  ///
  /// Calls are never concurrent: one observation receives one value at a time, in order.
  ///
  /// - Parameter observer: Called with each value, on the sending thread.
  /// - Returns: The disposable that ends the observation.
  @inlinable
  @discardableResult
  public func observe(_ observer: @escaping @Sendable (Value) -> Void) -> any Disposable {
    switch source {
    case .subject(let core):
      guard let key = core.add(observer) else { return DisposedDisposable() }
      return ObserverToken(core: core, key: key)
    case .replaying(let owner):
      // The disposable holds the core, not its owner: it keeps no value alive (`ValueOwner`).
      let core = owner.core
      guard let key = core.addReplaying(observer) else { return DisposedDisposable() }
      return ObserverToken(core: core, key: key)
    case .producer(let producer):
      return GatedObservation.start(producer, observer: observer)
    case .forwarding(let producer):
      return producer(observer)
    }
  }
}

// A variable's signal holds the owner of its value, which must stay where the value may be.
extension Signal.Source: Sendable where Value: Sendable {}

extension Signal: Sendable where Value: Sendable {}
