import Foundation
import GRDB

/// A machine characterisation: when and where it was measured, and the raw sweep.
package struct MachineProfileRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "machine_profiles"
    package var id: Int64?
    package var machine: String
    package var cores: Int
    package var measuredAt: Date
    /// The bandwidth sweep as JSON, `[{"working_set_bytes", "gigabytes_per_second"}]`.
    package var sweepJSON: String

    package init(machine: String, cores: Int, measuredAt: Date = Date(), sweepJSON: String) {
        self.machine = machine
        self.cores = cores
        self.measuredAt = measuredAt
        self.sweepJSON = sweepJSON
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, machine, cores
        case measuredAt = "measured_at"
        case sweepJSON = "sweep_json"
    }
}

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

    package init(profileID: Int64 = 0, kind: String, name: String, value: Double, provenance: String) {
        self.profileID = profileID
        self.kind = kind
        self.name = name
        self.value = value
        self.provenance = provenance
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, kind, name, value, provenance
        case profileID = "profile_id"
    }
}

extension Workspace {
    /// Stores a profile and its ceilings in one transaction; returns the profile's id.
    @discardableResult
    package func record(_ profile: MachineProfileRecord, ceilings: [CeilingRecord]) throws(WorkspaceError) -> Int64 {
        try write { db in
            var profile = profile
            try profile.insert(db)
            let id = profile.id!
            for var ceiling in ceilings {
                ceiling.profileID = id
                try ceiling.insert(db)
            }
            return id
        }
    }

    /// The most recent profile and its ceilings, if any.
    package func latestMachineProfile() throws(WorkspaceError) -> (
        profile: MachineProfileRecord, ceilings: [CeilingRecord]
    )? {
        try read { db in
            guard
                let profile = try MachineProfileRecord.order(Column("measured_at").desc, Column("id").desc).fetchOne(
                    db),
                let id = profile.id
            else { return nil }
            return (profile, try CeilingRecord.filter(Column("profile_id") == id).order(Column("id")).fetchAll(db))
        }
    }
}
