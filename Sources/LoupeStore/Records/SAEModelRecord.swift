import Foundation
import GRDB

/// A stored SAE: settings and state are the model layer's to read.
package struct SAEModelRecord: Codable, FetchableRecord, Hashable, Sendable {
    package var id: Int64
    package var setID: Int64
    package var layer: Int
    package var width: Int
    package var settingsJSON: String
    package var step: Int
    package var state: Data
    package var metricsJSON: String?
    package var createdAt: Date
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, layer, width, step, state
        case setID = "set_id"
        case settingsJSON = "settings_json"
        case metricsJSON = "metrics_json"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
