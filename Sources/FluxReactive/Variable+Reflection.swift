extension Variable: CustomReflectable {
  /// The variable as `Mirror` shows it: its current ``value``, read under its lock, and nothing
  /// of how it keeps it (its lock, its observers).
  ///
  /// So `dump(variable)`, and a log's snapshots of a state through `Mirror`, show the value. The
  /// read is not one that Observation tracks.
  public var customMirror: Mirror {
    Mirror(self, children: ["value": core.read(tracked: false)], displayStyle: .class)
  }
}

extension Constant: CustomReflectable {
  /// The constant as `Mirror` shows it: its current ``value``, read under the lock of the
  /// variable it views, if any.
  ///
  /// So `dump(constant)`, and a log's snapshots of a state through `Mirror`, show the value.
  public var customMirror: Mirror {
    Mirror(self, children: ["value": value], displayStyle: .struct)
  }
}
