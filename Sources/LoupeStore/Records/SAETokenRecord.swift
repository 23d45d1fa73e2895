import Foundation
import GRDB

/// Where a collected row's token came from.
package struct SAETokenRecord: Codable, FetchableRecord, Hashable, Sendable {
    package var row: Int
    package var chunkID: Int64
    package var position: Int
    package var token: String

    package init(row: Int, chunkID: Int64, position: Int, token: String) {
        self.row = row
        self.chunkID = chunkID
        self.position = position
        self.token = token
    }

    enum CodingKeys: String, CodingKey {
        case row, position, token
        case chunkID = "chunk_id"
    }
}
