import Foundation
import GRDB

/// One annotator's verdict on one criterion of one item: who, when, under which rubric version.
package struct ReviewLabelRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "review_labels"
    package var id: Int64?
    package var queueID: Int64
    package var itemKey: String
    package var criterion: String
    /// The value as text (an option's name, a number, true/false, a note).
    package var value: String
    /// The value as a number where it is one (numeric; 1/0 for a boolean).
    package var number: Double?
    package var annotator: String
    package var rubricVersion: Int
    package var rubricHash: String
    /// review (the TUI), command (`loupe review label`) or import.
    package var origin: String
    package var createdAt: Date

    package init(
        queueID: Int64, itemKey: String, criterion: String, value: String, number: Double?, annotator: String,
        rubricVersion: Int, rubricHash: String, origin: String, createdAt: Date = Date()
    ) {
        self.queueID = queueID
        self.itemKey = itemKey
        self.criterion = criterion
        self.value = value
        self.number = number
        self.annotator = annotator
        self.rubricVersion = rubricVersion
        self.rubricHash = rubricHash
        self.origin = origin
        self.createdAt = createdAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, criterion, value, number, annotator, origin
        case queueID = "queue_id"
        case itemKey = "item_key"
        case rubricVersion = "rubric_version"
        case rubricHash = "rubric_hash"
        case createdAt = "created_at"
    }
}
