import Foundation
import GRDB

/// One item of a review queue, at its place in the queue's shuffled order. The run, item, epoch
/// and trace columns are kept apart for the queries that join labels to answers; `refJSON` holds
/// the whole reference as the review layer defines it (a step's span id, a pair's two sides and
/// their order on screen).
package struct ReviewItemRecord: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "review_items"
    package var queueID: Int64
    package var position: Int
    package var itemKey: String
    package var runID: Int64?
    package var evalItemID: String?
    package var epoch: Int?
    package var traceID: Int64?
    package var refJSON: String

    package init(
        queueID: Int64, position: Int, itemKey: String, runID: Int64? = nil, evalItemID: String? = nil,
        epoch: Int? = nil, traceID: Int64? = nil, refJSON: String
    ) {
        self.queueID = queueID
        self.position = position
        self.itemKey = itemKey
        self.runID = runID
        self.evalItemID = evalItemID
        self.epoch = epoch
        self.traceID = traceID
        self.refJSON = refJSON
    }

    enum CodingKeys: String, CodingKey {
        case position, epoch
        case queueID = "queue_id"
        case itemKey = "item_key"
        case runID = "run_id"
        case evalItemID = "eval_item_id"
        case traceID = "trace_id"
        case refJSON = "ref_json"
    }
}
