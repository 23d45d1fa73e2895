import Foundation
import GRDB

/// A model the workspace knows: where its files were and which weights they were.
package struct ModelRecord: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "models"
    package var name: String
    package var directory: String
    package var weightsSHA256: String
    package var parameters: Int
    package var description: String
    package var registeredAt: Date

    package init(
        name: String, directory: String, weightsSHA256: String, parameters: Int, description: String,
        registeredAt: Date = Date()
    ) {
        self.name = name
        self.directory = directory
        self.weightsSHA256 = weightsSHA256
        self.parameters = parameters
        self.description = description
        self.registeredAt = registeredAt
    }

    enum CodingKeys: String, CodingKey {
        case name
        case directory
        case weightsSHA256 = "weights_sha256"
        case parameters
        case description
        case registeredAt = "registered_at"
    }
}

extension Workspace {
    /// Records (or updates) a model.
    package func register(_ model: ModelRecord) throws(WorkspaceError) {
        try write { db in try model.save(db) }
    }

    /// The registered models, by name.
    package func models() throws(WorkspaceError) -> [ModelRecord] {
        try read { db in try ModelRecord.order(Column("name")).fetchAll(db) }
    }
}
