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

    /// Every profile, newest first.
    package func machineProfiles() throws(WorkspaceError) -> [MachineProfileRecord] {
        try read { db in try MachineProfileRecord.order(Column("measured_at").desc, Column("id").desc).fetchAll(db) }
    }

    /// The ceilings of profile `id`.
    package func ceilings(profileID id: Int64) throws(WorkspaceError) -> [CeilingRecord] {
        try read { db in try CeilingRecord.filter(Column("profile_id") == id).order(Column("id")).fetchAll(db) }
    }

    /// The profile with `machine` as its name and `kind`, newest, if any.
    package func machineProfile(named machine: String, kind: String) throws(WorkspaceError) -> MachineProfileRecord? {
        try read { db in
            try MachineProfileRecord.filter(Column("machine") == machine && Column("kind") == kind).order(
                Column("measured_at").desc, Column("id").desc
            ).fetchOne(db)
        }
    }

    /// The most recent CPU profile and its ceilings, if any.
    package func latestMachineProfile() throws(WorkspaceError) -> (
        profile: MachineProfileRecord, ceilings: [CeilingRecord]
    )? {
        try read { db in
            guard
                let profile = try MachineProfileRecord.filter(Column("kind") == "cpu").order(
                    Column("measured_at").desc, Column("id").desc
                ).fetchOne(db),
                let id = profile.id
            else { return nil }
            return (profile, try CeilingRecord.filter(Column("profile_id") == id).order(Column("id")).fetchAll(db))
        }
    }
}
