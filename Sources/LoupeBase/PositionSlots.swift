/// A fixed row of optional values in storage of its own, for handing values between threads by
/// position without a lock: the caller's protocol gives each slot to one thread at a time (a
/// position claimed by one worker, read by the caller after the workers are done).
final class PositionSlots<Value>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Value?>

    /// `count` empty slots.
    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    /// A slot holding each of `values`, in order.
    init(_ values: consuming [Value]) {
        slots = .allocate(capacity: values.count)
        for (index, value) in values.enumerated() { (slots.baseAddress! + index).initialize(to: value) }
    }

    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }

    var count: Int { slots.count }

    subscript(index: Int) -> Value? {
        get { slots[index] }
        set { slots[index] = newValue }
    }

    /// The value at `index`, leaving its slot empty (so it is let go by whoever took it).
    func take(_ index: Int) -> Value? {
        let value = slots[index]
        slots[index] = nil
        return value
    }
}
