/// Conversions and arithmetic for numbers read from a user's file (a log's seconds, a tensor's
/// shape, a blob's counts): each either gives the exact result or throws a `CheckedNumber.Failure`
/// naming the field and the value, where the unchecked form would trap ("arithmetic overflow",
/// "Double value cannot be converted to Int64") or silently wrap.
package enum CheckedNumber {
    /// A number that is not finite, not whole, negative where a size is meant, or out of range:
    /// the field it came from, the value as read, and what is wrong with it. Readers with their
    /// own error type wrap it with their file and line; `location` is for those that do not.
    package struct Failure: UserFacingError, Hashable, Sendable {
        package var location: SourceLocation?
        package var field: String
        package var value: String
        package var problem: String

        package init(location: SourceLocation? = nil, field: String, value: String, problem: String) {
            self.location = location
            self.field = field
            self.value = value
            self.problem = problem
        }

        /// `field: value problem`, for a reader's own error that already says the file.
        package var message: String { "\(field): \(value) \(problem)" }

        package var description: String { (location.map { "\($0): " } ?? "") + message }
    }

    /// Seconds as a Double → whole nanoseconds; the value must be finite and within Int64
    /// nanoseconds (about ±292 years from 1970, i.e. years 1678 to 2261).
    package static func nanoseconds(seconds: Double, field: String) throws(Failure) -> Int64 {
        let nanoseconds = seconds * 1e9
        // 2^63 is exactly representable; every Double below it converts.
        guard nanoseconds.isFinite, nanoseconds >= -0x1p63, nanoseconds < 0x1p63 else {
            throw Failure(
                field: field, value: "\(seconds)", problem: "seconds is not a time Loupe can hold (finite, ±292 years)")
        }
        return Int64(nanoseconds)
    }

    /// A Double that must be a whole number within `range` (a count, a dimension).
    package static func integer(
        _ value: Double, field: String, in range: ClosedRange<Int> = Int.min...Int.max
    ) throws(Failure) -> Int {
        guard value.isFinite, value == value.rounded(), let whole = Int(exactly: value), range.contains(whole) else {
            throw Failure(field: field, value: "\(value)", problem: "is not a whole number in \(describe(range))")
        }
        return whole
    }

    /// An integer that must lie within `range` (a dimension ≥ 0, a count that fits the data).
    package static func checked(_ value: Int, field: String, in range: ClosedRange<Int>) throws(Failure) -> Int {
        guard range.contains(value) else {
            throw Failure(field: field, value: "\(value)", problem: "is outside \(describe(range))")
        }
        return value
    }

    /// `a × b` for sizes, or a failure where it overflows `Int`.
    package static func product(_ a: Int, _ b: Int, field: String) throws(Failure) -> Int {
        let (result, overflow) = a.multipliedReportingOverflow(by: b)
        guard !overflow else { throw Failure(field: field, value: "\(a) × \(b)", problem: "overflows a 64-bit size") }
        return result
    }

    /// The product of non-negative factors (a tensor's element count), or a failure where a
    /// factor is negative or the product overflows `Int`.
    package static func product(of factors: [Int], field: String) throws(Failure) -> Int {
        var result = 1
        for factor in factors {
            guard factor >= 0 else { throw Failure(field: field, value: "\(factors)", problem: "has a negative entry") }
            let (next, overflow) = result.multipliedReportingOverflow(by: factor)
            guard !overflow else {
                throw Failure(field: field, value: "\(factors)", problem: "has a product that overflows a 64-bit size")
            }
            result = next
        }
        return result
    }

    /// `a + b` for offsets and sizes, or a failure where it overflows `Int`.
    package static func sum(_ a: Int, _ b: Int, field: String) throws(Failure) -> Int {
        let (result, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw Failure(field: field, value: "\(a) + \(b)", problem: "overflows a 64-bit size") }
        return result
    }

    /// `a + b` for nanosecond times, or a failure where it overflows `Int64`.
    package static func sum(_ a: Int64, _ b: Int64, field: String) throws(Failure) -> Int64 {
        let (result, overflow) = a.addingReportingOverflow(b)
        guard !overflow else {
            throw Failure(field: field, value: "\(a) + \(b) ns", problem: "is not a time Loupe can hold (±292 years)")
        }
        return result
    }

    /// `a × b` for nanosecond times, or a failure where it overflows `Int64`.
    package static func product(_ a: Int64, _ b: Int64, field: String) throws(Failure) -> Int64 {
        let (result, overflow) = a.multipliedReportingOverflow(by: b)
        guard !overflow else {
            throw Failure(field: field, value: "\(a) × \(b)", problem: "is not a time Loupe can hold (±292 years)")
        }
        return result
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (Int.min, Int.max): "64-bit range"
        case (let low, Int.max): "\(low) or more"
        case (let low, let high): "\(low)...\(high)"
        }
    }
}
