import Foundation
import LoupeBase

/// Token counts and cost; nil where the source did not say (never read as 0).
package struct Usage: Hashable, Sendable {
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cacheReadTokens: Int?
    package var cacheWriteTokens: Int?
    package var reasoningTokens: Int?
    /// Dollars, when the source recorded it.
    package var cost: Double?

    package init(
        inputTokens: Int? = nil, outputTokens: Int? = nil, cacheReadTokens: Int? = nil, cacheWriteTokens: Int? = nil,
        reasoningTokens: Int? = nil, cost: Double? = nil
    ) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cacheReadTokens = cacheReadTokens
        self.cacheWriteTokens = cacheWriteTokens
        self.reasoningTokens = reasoningTokens
        self.cost = cost
    }

    package var isEmpty: Bool { self == Usage() }

    /// The most tokens one call may report: far beyond any real call, and small enough that
    /// summing millions of calls (a trace's or a run's total) cannot overflow `Int`.
    package static let tokenCountLimit = 1 << 40

    /// A token count from a file: nil when absent or not an integer (the source did not say);
    /// a failure naming `field` when it is negative or past `tokenCountLimit`, which would
    /// otherwise overflow the sums made of it.
    package static func tokenCount(_ value: JSONValue?, field: String) throws(CheckedNumber.Failure) -> Int? {
        guard let count = value?.int else { return nil }
        guard count >= 0, count <= tokenCountLimit else {
            throw CheckedNumber.Failure(
                field: field, value: "\(count)", problem: "is not a token count (0 to \(tokenCountLimit))")
        }
        return Int(count)
    }

    package static func + (a: Usage, b: Usage) -> Usage {
        func add<T: AdditiveArithmetic>(_ x: T?, _ y: T?) -> T? {
            x == nil && y == nil ? nil : (x ?? .zero) + (y ?? .zero)
        }
        return Usage(
            inputTokens: add(a.inputTokens, b.inputTokens), outputTokens: add(a.outputTokens, b.outputTokens),
            cacheReadTokens: add(a.cacheReadTokens, b.cacheReadTokens),
            cacheWriteTokens: add(a.cacheWriteTokens, b.cacheWriteTokens),
            reasoningTokens: add(a.reasoningTokens, b.reasoningTokens), cost: add(a.cost, b.cost))
    }
}
