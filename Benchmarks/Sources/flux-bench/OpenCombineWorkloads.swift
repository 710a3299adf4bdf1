import OpenCombine

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The workloads written with OpenCombine's subjects and `sink`.
enum OpenCombineWorkloads {
  static func prepare(_ workload: Workload, tally: Tally) -> Prepared {
    switch workload {
    case .w1: return sends(observers: 1, tally: tally)
    case .w2: return sends(observers: 10, tally: tally)
    case .w3: return variableSets(tally: tally)
    case .w3o: return trackedVariableSets(tally: tally)
    case .w4: return mapChain(tally: tally)
    case .w5: return churn(tally: tally)
    case .w6, .w10, .w13, .w14: return storeDispatch(tally: tally)
    case .w7: return sends(observers: Workload.globalStores, tally: tally)
    case .w8: return contention(tally: tally)
    case .w9: preconditionFailure("W9 runs through memory(tally:)")
    case .w11: return receiveOnImmediate(tally: tally)
    case .w12: return sends(observers: 1, tally: tally)
    case .w6i, .w10i, .w12i: return storeDispatch(tally: tally)
    case .w3r: return variableSets(tally: tally)
    case .w3m: return variableAdds(tally: tally)
    case .w15, .w16, .w17, .w18: preconditionFailure("OpenCombine does not run \(workload.rawValue)")
    }
  }

  private static func receiveOnImmediate(tally: Tally) -> Prepared {
    let subject = PassthroughSubject<Int, Never>()
    let cancellable = subject.receive(on: ImmediateScheduler.shared).sink { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { subject.send(value) }
      },
      expected: { range in withExtendedLifetime(cancellable) { sum(range) } }
    )
  }

  /// W1, W2 and the send curve: a subject with `observers` subscribers.
  static func sends(observers: Int, tally: Tally) -> Prepared {
    let subject = PassthroughSubject<Int, Never>()
    let cancellables = (0..<observers).map { _ in subject.sink { tally.add($0) } }
    return Prepared(
      run: { range in
        for value in range { subject.send(value) }
      },
      expected: { range in withExtendedLifetime(cancellables) { sum(range) &* observers } }
    )
  }

  private static func variableSets(tally: Tally) -> Prepared {
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellable = subject.sink { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { subject.send(value) }
      },
      expected: { range in withExtendedLifetime(cancellable) { sum(range) } }
    )
  }

  private static func variableAdds(tally: Tally) -> Prepared {
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellable = subject.sink { tally.add($0) }
    return Prepared(
      run: { range in
        for _ in range { subject.value += 1 }
      },
      expected: { range in withExtendedLifetime(cancellable) { sum(range) { $0 &+ 1 } } }
    )
  }

  private static func mapChain(tally: Tally) -> Prepared {
    let subject = PassthroughSubject<Int, Never>()
    let cancellable =
      subject
      .map { $0 &+ 1 }
      .map { $0 &* 2 }
      .map { $0 &- 3 }
      .sink { tally.add($0) }
    return Prepared(
      run: { range in
        for value in range { subject.send(value) }
      },
      expected: { range in withExtendedLifetime(cancellable) { sum(range) { ($0 &+ 1) &* 2 &- 3 } } }
    )
  }

  private static func churn(tally: Tally) -> Prepared {
    let subject = PassthroughSubject<Int, Never>()
    let standing = (0..<Workload.standingObservers).map { _ in subject.sink { tally.add($0) } }
    return churn(on: subject, keeping: standing, count: Workload.standingObservers, tally: tally)
  }

  /// W5 and the subscribe + dispose curve: each index subscribes to `subject` and cancels,
  /// beside the `count` standing subscriptions that `standing` keeps.
  static func churn(
    on subject: PassthroughSubject<Int, Never>, keeping standing: some Any, count: Int, tally: Tally
  ) -> Prepared {
    Prepared(
      run: { range in
        for _ in range {
          let cancellable = subject.sink { tally.add($0) }
          cancellable.cancel()
        }
      },
      expected: { _ in 0 },
      finish: {
        withExtendedLifetime(standing) { subject.send(7) }
        return 7 &* count
      }
    )
  }

  /// A `CurrentValueSubject` holds the state; a reducer computes the next one.
  private static func storeDispatch(tally: Tally) -> Prepared {
    let subject = CurrentValueSubject<Int, Never>(0)
    let cancellable = subject.sink { tally.add($0) }
    func reduce(_ state: Int, _ action: Int) -> Int { state &+ 1 }
    return Prepared(
      run: { range in
        for action in range { subject.send(reduce(subject.value, action)) }
      },
      expected: { range in withExtendedLifetime(cancellable) { sum(range) { $0 &+ 1 } } }
    )
  }

  /// Combine asks the upstream to serialize its sends, so the senders share a mutex.
  private static func contention(tally: Tally) -> Prepared {
    let subject = Shared(PassthroughSubject<Int, Never>())
    let cancellable = subject.value.sink { tally.add($0) }
    let mutex = Shared(UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1))
    mutex.value.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex.value, nil)
    return Prepared(
      run: { range in
        onTwoThreads(range) { part in
          for value in part {
            pthread_mutex_lock(mutex.value)
            subject.value.send(value)
            pthread_mutex_unlock(mutex.value)
          }
        }
      },
      expected: { range in withExtendedLifetime(cancellable) { sum(range) } }
    )
  }

  static func memory(tally: Tally) -> MemoryWorkload {
    let subject = PassthroughSubject<Int, Never>()
    var holder: Holder<AnyCancellable>?
    return MemoryWorkload(
      reserve: { holder = Holder(capacity: $0) },
      subscribe: { count in
        let holder = holder!
        for _ in 0..<count {
          holder.append(subject.sink { tally.add($0) })
        }
      },
      send: { subject.send($0) },
      release: { holder = nil }
    )
  }
}

/// Hands a value that is made safe by other means (a mutex here) to another thread.
private struct Shared<Value>: @unchecked Sendable {
  let value: Value

  init(_ value: Value) {
    self.value = value
  }
}
