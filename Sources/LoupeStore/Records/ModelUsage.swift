import Foundation
import GRDB

/// One trace's model calls of one model, summed: what pricing a trace needs.
package struct ModelUsage: Hashable, Sendable {
    package var trace: Int64
    package var model: String?
    package var calls: Int
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cacheReadTokens: Int?
    /// What the source recorded as cost, summed (nil when no call had one).
    package var cost: Double?
    /// Calls whose cost the source recorded.
    package var costed: Int
}
