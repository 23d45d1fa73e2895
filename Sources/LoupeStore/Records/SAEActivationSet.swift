import Foundation
import GRDB

/// Residual-stream rows of one layer, collected over the corpus.
package struct SAEActivationSet: Codable, FetchableRecord, Hashable, Sendable {
    package var id: Int64
    package var model: String
    package var layer: Int
    package var dimensions: Int
    package var rows: Int
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, model, layer, dimensions, rows
        case createdAt = "created_at"
    }
}
