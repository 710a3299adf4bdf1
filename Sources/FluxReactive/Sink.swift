/// A source of values: what you ``send(value:)`` reaches every observer of its ``signal``.
///
/// ```swift
/// let sink = Sink<Int>()
/// sink.signal.observe { print($0) }
/// sink.send(value: 100)
/// // prints "100"
/// ```
///
/// A sink keeps no value: an observer gets the values sent after it was added. Freeing the
/// sink ends its signal and releases every observer.
///
/// > Important: ``send(value:)`` delivers synchronously, on the calling thread, to the
/// > observers in the order they were added, and returns once every observer has the value.
/// > Sends from several threads are serialized: deliveries never overlap. A value sent from
/// > inside an observer of the same sink is queued and delivered to all observers right after
/// > the current delivery, before the outer `send` returns; the inner `send` returns at once.
/// > An observer that sends to this sink *and waits for another thread* that sends to it too
/// > deadlocks, as with any lock: do not block inside an observer.
public final class Sink<Value> {
  @usableFromInline
  let core: SubjectCore<Value>

  /// Creates a sink with no observers.
  @inlinable
  public init() {
    core = SubjectCore { $0.remove($1) }
  }

  deinit {
    core.terminate()
  }

  /// The signal of the values sent into this sink.
  @inlinable
  public var signal: Signal<Value> {
    Signal(source: .subject(core))
  }

  /// Delivers `value` to every observer of ``signal``.
  ///
  /// - Parameter value: The value to deliver.
  @inlinable
  public func send(value: Value) {
    core.send(value)
  }
}

// The core guards its state with its lock; the sink itself holds only a constant reference.
extension Sink: Sendable where Value: Sendable {}
