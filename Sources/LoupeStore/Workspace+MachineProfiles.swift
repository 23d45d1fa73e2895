import Foundation

/// The roofline's tables of a SQLite workspace: ``RooflineTables`` over this file.
extension Workspace {
    package var roofline: RooflineTables { RooflineTables(self) }

    /// Stores a profile and its ceilings in one transaction; returns the profile's id.
    @discardableResult
    package func record(_ profile: MachineProfileRecord, ceilings: [CeilingRecord]) throws(WorkspaceError) -> Int64 {
        try roofline.record(profile, ceilings: ceilings)
    }

    package func add(_ ceilings: [CeilingRecord], toProfile id: Int64) throws(WorkspaceError) {
        try roofline.add(ceilings, toProfile: id)
    }

    package func machineProfiles() throws(WorkspaceError) -> [MachineProfileRecord] { try roofline.machineProfiles() }

    package func ceilings(profileID id: Int64) throws(WorkspaceError) -> [CeilingRecord] {
        try roofline.ceilings(profileID: id)
    }

    package func machineProfile(named machine: String, kind: String) throws(WorkspaceError) -> MachineProfileRecord? {
        try roofline.machineProfile(named: machine, kind: kind)
    }

    package func latestMachineProfile() throws(WorkspaceError) -> (
        profile: MachineProfileRecord, ceilings: [CeilingRecord]
    )? { try roofline.latestMachineProfile() }
}
