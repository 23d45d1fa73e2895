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

extension SettingsTables {
    /// Records (or updates) a model.
    package func register(_ model: ModelRecord) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                """
                INSERT INTO models (name, directory, weights_sha256, parameters, description, registered_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET directory = excluded.directory,
                  weights_sha256 = excluded.weights_sha256, parameters = excluded.parameters,
                  description = excluded.description, registered_at = excluded.registered_at
                """,
                [
                    .text(model.name), .text(model.directory), .text(model.weightsSHA256),
                    .integer(Int64(model.parameters)), .text(model.description), SQLValue(date: model.registeredAt),
                ])
        }
    }

    /// The registered models, by name.
    package func models() throws(WorkspaceError) -> [ModelRecord] {
        try database.readStatements { sql in try sql.fetch(ModelRecord.self, "SELECT * FROM models ORDER BY name") }
    }
}
