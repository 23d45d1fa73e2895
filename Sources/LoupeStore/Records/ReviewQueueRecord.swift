import Foundation
import GRDB

/// A review queue: a rubric over items drawn from the workspace. The rubric is kept as JSON in the
/// form the eval layer defines, so a queue reads the same after its file changed.
package struct ReviewQueueRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "review_queues"
    package var id: Int64?
    package var name: String
    package var rubricName: String
    package var rubricVersion: Int
    /// SHA-256 of the rubric file's text (first 12 hex digits).
    package var rubricHash: String
    package var rubricJSON: String
    package var rubricFile: String?
    /// answer, trace, step, session or hit.
    package var target: String
    /// single or pairwise.
    package var mode: String
    /// The filter the items were drawn with, as given.
    package var source: String
    package var seed: Int64
    package var createdBy: String
    package var createdAt: Date

    package init(
        name: String, rubricName: String, rubricVersion: Int, rubricHash: String, rubricJSON: String,
        rubricFile: String?, target: String, mode: String, source: String, seed: Int64, createdBy: String,
        createdAt: Date = Date()
    ) {
        self.name = name
        self.rubricName = rubricName
        self.rubricVersion = rubricVersion
        self.rubricHash = rubricHash
        self.rubricJSON = rubricJSON
        self.rubricFile = rubricFile
        self.target = target
        self.mode = mode
        self.source = source
        self.seed = seed
        self.createdBy = createdBy
        self.createdAt = createdAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, name, target, mode, source, seed
        case rubricName = "rubric_name"
        case rubricVersion = "rubric_version"
        case rubricHash = "rubric_hash"
        case rubricJSON = "rubric_json"
        case rubricFile = "rubric_file"
        case createdBy = "created_by"
        case createdAt = "created_at"
    }
}
