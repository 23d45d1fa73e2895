/// A `Hashable & Sendable` value with its type erased, compared and hashed as itself: what lets
/// one enum case carry every panel's requests, answers and actions while staying `Hashable`.
/// (`AnyHashable` is not `Sendable`, and an `any Hashable & Sendable` existential is not
/// `Hashable`.)
package struct AnySendableHashable: Hashable, Sendable {
    /// The value, to cast back with `as?`.
    package let base: any Sendable
    private let equals: @Sendable (any Sendable) -> Bool
    private let hashing: @Sendable (inout Hasher) -> Void

    package init<Value: Hashable & Sendable>(_ value: Value) {
        base = value
        equals = { other in (other as? Value) == value }
        hashing = { hasher in hasher.combine(value) }
    }

    package static func == (left: AnySendableHashable, right: AnySendableHashable) -> Bool {
        left.equals(right.base)
    }

    package func hash(into hasher: inout Hasher) { hashing(&hasher) }
}
