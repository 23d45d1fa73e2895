import Foundation
import GRDB

/// One row of `command_history`.
struct HistoryEntry: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "command_history"
    var id: Int64?
    var line: String
    var source: HistorySource
    var ranAt: Date

    enum CodingKeys: String, CodingKey {
        case id
        case line
        case source
        case ranAt = "ran_at"
    }
}
