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
