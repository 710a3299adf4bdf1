/// Something that can be ended, usually an observation of a ``Signal``.
///
/// ```swift
/// let disposable = signal.observe { value in
///   // Not called after `dispose()`.
/// }
/// disposable.dispose()
/// ```
///
/// > Important: ``dispose()`` is idempotent and may be called from any thread. Once it has
/// > returned, the observation delivers nothing more; called from inside a delivery, the
/// > disposed observer gets nothing more from that delivery either.
public protocol Disposable: Sendable {
  /// Whether ``dispose()`` has taken effect.
  var isDisposed: Bool { get }

  /// Ends what this disposable stands for. Calling it again does nothing.
  func dispose()
}
