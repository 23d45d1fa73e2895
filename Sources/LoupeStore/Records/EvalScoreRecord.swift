import Foundation
import GRDB

package struct EvalScoreRecord: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "eval_scores"
    package var runID: Int64
    package var itemID: String
    package var epoch: Int
    package var scorer: String
    package var value: Double
    package var passed: Bool?
    package var explanation: String
    package var detailsJSON: String?

    package init(
        runID: Int64, itemID: String, epoch: Int, scorer: String, value: Double, passed: Bool?, explanation: String,
        detailsJSON: String? = nil
    ) {
        self.runID = runID
        self.itemID = itemID
        self.epoch = epoch
        self.scorer = scorer
        self.value = value
        self.passed = passed
        self.explanation = explanation
        self.detailsJSON = detailsJSON
    }

    enum CodingKeys: String, CodingKey {
        case epoch, scorer, value, passed, explanation
        case runID = "run_id"
        case itemID = "item_id"
        case detailsJSON = "details_json"
    }
}
