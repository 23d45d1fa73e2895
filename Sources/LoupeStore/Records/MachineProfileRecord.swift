import Foundation
import GRDB

/// A machine characterisation: when and where it was measured, and the raw sweep.
package struct MachineProfileRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "machine_profiles"
    package var id: Int64?
    package var machine: String
    package var cores: Int
    package var measuredAt: Date
    /// `cpu` (measured here) or `gpu` (a datasheet table or an ncu export).
    package var kind: String
    /// The bandwidth sweep as JSON, `[{"working_set_bytes", "gigabytes_per_second"}]`.
    package var sweepJSON: String

    package init(machine: String, cores: Int, measuredAt: Date = Date(), sweepJSON: String, kind: String = "cpu") {
        self.machine = machine
        self.kind = kind
        self.cores = cores
        self.measuredAt = measuredAt
        self.sweepJSON = sweepJSON
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, machine, cores, kind
        case measuredAt = "measured_at"
        case sweepJSON = "sweep_json"
    }
}
