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

/// What changed among the traces since a read (``TraceTables/traceChanges(since:)``).
package struct TraceChanges: Hashable, Sendable {
    /// The traces inserted or changed, in id order (every trace on a first read).
    package var traces: [TraceSummary]
    /// Their model usage, every row of each.
    package var usage: [ModelUsage]
    /// How many traces there are now: fewer than the list holds means some were deleted.
    package var total: Int
    /// What the next read passes as `since`.
    package var watermark: TraceWatermark
}

/// Where a read of the traces stood: the rows it could not see are numbered `next` or more, or
/// by a transaction in `running` (PostgreSQL's snapshot; SQLite has one writer, and none running).
package struct TraceWatermark: Hashable, Sendable {
    package var next: Int64
    package var running: [Int64]
}
