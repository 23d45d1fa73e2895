import Foundation
import GRDB

/// A trace to store: its row (id ignored), spans with their payloads, scores.
package struct NewTrace: Hashable, Sendable {
    package struct SpanRecord: Hashable, Sendable {
        package var row: SpanRow
        package var payloadJSON: String
        /// The source as written, zstd-compressed JSON.
        package var rawZstd: Data?

        package init(row: SpanRow, payloadJSON: String, rawZstd: Data?) {
            self.row = row
            self.payloadJSON = payloadJSON
            self.rawZstd = rawZstd
        }
    }

    package struct ScoreRecord: Hashable, Sendable {
        package var scorer: String
        package var valueJSON: String
        package var answer: String?
        package var explanation: String?

        package init(scorer: String, valueJSON: String, answer: String?, explanation: String?) {
            self.scorer = scorer
            self.valueJSON = valueJSON
            self.answer = answer
            self.explanation = explanation
        }
    }

    package var summary: TraceSummary
    package var metadataJSON: String
    package var contentHash: String
    package var spans: [SpanRecord]
    package var scores: [ScoreRecord]

    package init(
        summary: TraceSummary, metadataJSON: String, contentHash: String, spans: [SpanRecord], scores: [ScoreRecord]
    ) {
        self.summary = summary
        self.metadataJSON = metadataJSON
        self.contentHash = contentHash
        self.spans = spans
        self.scores = scores
    }
}
