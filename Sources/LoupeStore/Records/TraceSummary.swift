import Foundation
import GRDB

/// A trace's row: identity and the totals the trace list shows.
package struct TraceSummary: Hashable, Sendable, Codable {
    package var id: Int64
    package var externalID: String
    package var format: String
    package var sourceFile: String?
    package var name: String
    package var startedNs: Int64
    package var endedNs: Int64
    package var timed: Bool
    package var spanCount: Int
    package var stepCount: Int
    package var errorCount: Int
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cost: Double?
    package var parentTraceID: Int64?
    package var forkOrdinal: Int?
    package var importedAt: Date
    /// The models its spans called, in name order.
    package var models: [String] = []
    /// The session it is a turn of (`session.id`, `gen_ai.conversation.id`, a thread, an
    /// Inspect sample's epochs).
    package var sessionID: String?
    /// Spans whose parent has not arrived: more than 0 while a received trace is still coming.
    package var awaitingParents = 0

    package var durationNs: Int64 { max(0, endedNs - startedNs) }

    /// Whether it came over the network (OTLP/HTTP or OTLP/gRPC) rather than from a file.
    package var isReceived: Bool { sourceFile?.hasPrefix("OTLP/") ?? false }

    /// How long after its last span a received trace with spans still waiting counts as live.
    package static let liveWindow: TimeInterval = 600

    /// Still arriving: received, some spans wait for their parent, and the last came within
    /// `window` of `now`.
    package func isLive(now: Date = Date(), window: TimeInterval = liveWindow) -> Bool {
        isReceived && awaitingParents > 0 && now.timeIntervalSince(importedAt) < window
    }

    package init(
        id: Int64, externalID: String, format: String, sourceFile: String?, name: String, startedNs: Int64,
        endedNs: Int64, timed: Bool, spanCount: Int, stepCount: Int, errorCount: Int, inputTokens: Int?,
        outputTokens: Int?, cost: Double?, parentTraceID: Int64?, forkOrdinal: Int?, importedAt: Date,
        models: [String] = [], sessionID: String? = nil, awaitingParents: Int = 0
    ) {
        self.models = models
        self.sessionID = sessionID
        self.awaitingParents = awaitingParents
        self.id = id
        self.externalID = externalID
        self.format = format
        self.sourceFile = sourceFile
        self.name = name
        self.startedNs = startedNs
        self.endedNs = endedNs
        self.timed = timed
        self.spanCount = spanCount
        self.stepCount = stepCount
        self.errorCount = errorCount
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cost = cost
        self.parentTraceID = parentTraceID
        self.forkOrdinal = forkOrdinal
        self.importedAt = importedAt
    }
}
