import Foundation
import GRDB

/// What `loupe workspace info` reports.
package struct WorkspaceInfo: Codable, Hashable, Sendable {
    /// A table and how many rows it holds.
    package struct TableCount: Codable, Hashable, Sendable {
        package var name: String
        package var rows: Int

        package init(name: String, rows: Int) {
            self.name = name
            self.rows = rows
        }
    }

    package var path: String
    package var schemaVersion: Int
    package var knownSchemaVersion: Int
    package var fileBytes: Int64
    package var walBytes: Int64
    package var pageSize: Int
    package var pageCount: Int
    package var freePages: Int
    package var journalMode: String
    package var tables: [TableCount]
}
