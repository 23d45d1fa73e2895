import Foundation
import GRDB

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

    /// Adds ceilings to profile `id` (a roof measured after the profile was, such as an int8 one).
    package func add(_ ceilings: [CeilingRecord], toProfile id: Int64) throws(WorkspaceError) {
        try write { db in
            for var ceiling in ceilings {
                ceiling.profileID = id
                try ceiling.insert(db)
            }
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
