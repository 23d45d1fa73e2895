import Foundation
import GRDB

/// One answer of a run: an item at an epoch.
package struct EvalResultRecord: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "eval_results"
    package var runID: Int64
    package var itemID: String
    package var epoch: Int
    package var input: String
    package var targetsJSON: String
    package var output: String?
    package var error: String?
    package var latencyMs: Double?
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cost: Double?
    package var confidence: Double?
    package var traceID: Int64?
    package var retrievalRecordID: Int64?
    package var metadataJSON: String
    package var finishedAt: Date

    package init(
        runID: Int64, itemID: String, epoch: Int, input: String, targetsJSON: String, output: String?, error: String?,
        latencyMs: Double?, inputTokens: Int? = nil, outputTokens: Int? = nil, cost: Double? = nil,
        confidence: Double? = nil, traceID: Int64? = nil, retrievalRecordID: Int64? = nil, metadataJSON: String = "{}",
        finishedAt: Date = Date()
    ) {
        self.runID = runID
        self.itemID = itemID
        self.epoch = epoch
        self.input = input
        self.targetsJSON = targetsJSON
        self.output = output
        self.error = error
        self.latencyMs = latencyMs
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cost = cost
        self.confidence = confidence
        self.traceID = traceID
        self.retrievalRecordID = retrievalRecordID
        self.metadataJSON = metadataJSON
        self.finishedAt = finishedAt
    }

    enum CodingKeys: String, CodingKey {
        case epoch, input, output, error, cost, confidence
        case runID = "run_id"
        case itemID = "item_id"
        case targetsJSON = "targets_json"
        case latencyMs = "latency_ms"
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case traceID = "trace_id"
        case retrievalRecordID = "retrieval_record_id"
        case metadataJSON = "metadata_json"
        case finishedAt = "finished_at"
    }
}
