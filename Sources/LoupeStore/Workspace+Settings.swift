import Foundation
import GRDB

/// One row of the `settings` table: a user choice remembered by the workspace (the theme, …).
struct Setting: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "settings"
    var key: String
    var value: String
    var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case key
        case value
        case updatedAt = "updated_at"
    }
}

extension Workspace {
    /// The stored value of a setting, or nil when it was never set.
    package func setting(_ key: String) throws(WorkspaceError) -> String? {
        try read { db in try Setting.fetchOne(db, key: key)?.value }
    }

    /// Stores a setting, replacing any earlier value.
    package func setSetting(_ key: String, to value: String, now: Date = Date()) throws(WorkspaceError) {
        try write { db in try Setting(key: key, value: value, updatedAt: now).save(db) }
    }
}
