import Foundation
import GRDB

/// One roof: a compute ceiling (GFLOP/s) or a memory ceiling (GB/s), with how it was obtained.
package struct CeilingRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "ceilings"
    package var id: Int64?
    package var profileID: Int64
    /// `compute` or `memory`.
    package var kind: String
    package var name: String
    /// GFLOP/s for compute, GB/s for memory.
    package var value: Double
    package var provenance: String
    /// The precision of a compute roof (`FP32`, `FP64`, `FP16`, `TF32`, `BF16`, `FP8`).
    package var precision: String?

    package init(
        profileID: Int64 = 0, kind: String, name: String, value: Double, provenance: String, precision: String? = nil
    ) {
        self.precision = precision
        self.profileID = profileID
        self.kind = kind
        self.name = name
        self.value = value
        self.provenance = provenance
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, kind, name, value, provenance, precision
        case profileID = "profile_id"
    }
}
