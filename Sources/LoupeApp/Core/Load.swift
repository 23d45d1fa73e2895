/// Something a panel asked for, or why it could not be had: the one loaded-or-failed type of
/// every panel's reads.
package enum Load<Value: Hashable & Sendable>: Hashable, Sendable {
    case loaded(Value)
    case failed(String)

    /// `body`'s value, or its error as text.
    package static func from(_ body: () throws -> Value) -> Load {
        do { return .loaded(try body()) } catch { return .failed("\(error)") }
    }

    /// The value, nil when it failed.
    package var value: Value? {
        if case .loaded(let value) = self { return value }
        return nil
    }

    /// Why it failed, nil when it loaded.
    package var failure: String? {
        if case .failed(let message) = self { return message }
        return nil
    }
}
