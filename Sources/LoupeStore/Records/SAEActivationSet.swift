import Foundation
import GRDB

/// Residual-stream rows of one layer, collected over the corpus.
package struct SAEActivationSet: Codable, FetchableRecord, Hashable, Sendable {
    package var id: Int64
    package var model: String
    package var layer: Int
    package var dimensions: Int
    /// Rows stored so far.
    package var rows: Int
    package var createdAt: Date
    /// Rows the collection set out to store (nil for sets from before this was recorded).
    package var plannedRows: Int?
    /// True once the collection finished: set in the transaction that stored its last rows, so a
    /// killed collection leaves a set that says it is partial.
    package var complete: Bool

    enum CodingKeys: String, CodingKey {
        case id, model, layer, dimensions, rows, complete
        case createdAt = "created_at"
        case plannedRows = "planned_rows"
    }
}
