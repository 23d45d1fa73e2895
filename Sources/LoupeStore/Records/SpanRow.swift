import Foundation
import GRDB

/// A span's row without its payload: what the tree and timeline draw.
package struct SpanRow: Hashable, Sendable, Codable {
    package var ordinal: Int
    package var spanID: String
    package var parentSpanID: String?
    package var kind: String
    package var name: String
    package var startNs: Int64
    package var endNs: Int64?
    package var status: String
    package var statusMessage: String?
    package var model: String?
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cacheReadTokens: Int?
    package var cacheWriteTokens: Int?
    package var reasoningTokens: Int?
    package var cost: Double?
    package var toolName: String?

    package init(
        ordinal: Int, spanID: String, parentSpanID: String?, kind: String, name: String, startNs: Int64, endNs: Int64?,
        status: String, statusMessage: String?, model: String?, inputTokens: Int?, outputTokens: Int?,
        cacheReadTokens: Int?, cacheWriteTokens: Int?, reasoningTokens: Int?, cost: Double?, toolName: String?
    ) {
        self.ordinal = ordinal
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.kind = kind
        self.name = name
        self.startNs = startNs
        self.endNs = endNs
        self.status = status
        self.statusMessage = statusMessage
        self.model = model
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cacheReadTokens = cacheReadTokens
        self.cacheWriteTokens = cacheWriteTokens
        self.reasoningTokens = reasoningTokens
        self.cost = cost
        self.toolName = toolName
    }
}
