import Foundation
import GRDB

/// Machine profiles and their ceilings, measured kernel runs and approximate-search sweeps: the
/// roofline's tables, written once in SQL both backends run, over a ``SQLDatabase`` (a SQLite
/// ``Workspace`` or a PostgreSQL workspace), so a team's kernels and roofs meet in one place.
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct RooflineTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    // MARK: - Machine profiles

    /// Stores a profile and its ceilings in one transaction; returns the profile's id.
    @discardableResult
    package func record(_ profile: MachineProfileRecord, ceilings: [CeilingRecord]) throws(WorkspaceError) -> Int64 {
        try database.writeStatements { sql in
            guard let id = try sql.insert(profile, returningID: true).id else {
                throw WorkspaceError(.database, path: "machine_profiles", message: "the new profile was given no id")
            }
            try Self.insert(ceilings, profile: id, sql)
            return id
        }
    }

    /// Adds ceilings to profile `id` (a roof measured after the profile was, such as an int8 one).
    package func add(_ ceilings: [CeilingRecord], toProfile id: Int64) throws(WorkspaceError) {
        try database.writeStatements { sql in try Self.insert(ceilings, profile: id, sql) }
    }

    private static func insert(_ ceilings: [CeilingRecord], profile id: Int64, _ sql: any SQLStatements) throws {
        for var ceiling in ceilings {
            ceiling.profileID = id
            try sql.insert(ceiling)
        }
    }

    /// Every profile, newest first.
    package func machineProfiles() throws(WorkspaceError) -> [MachineProfileRecord] {
        try database.readStatements { sql in
            try sql.fetch(
                MachineProfileRecord.self, "SELECT * FROM machine_profiles ORDER BY measured_at DESC, id DESC")
        }
    }

    /// The ceilings of profile `id`.
    package func ceilings(profileID id: Int64) throws(WorkspaceError) -> [CeilingRecord] {
        try database.readStatements { sql in try Self.ceilings(profileID: id, sql) }
    }

    private static func ceilings(profileID id: Int64, _ sql: any SQLStatements) throws -> [CeilingRecord] {
        try sql.fetch(CeilingRecord.self, "SELECT * FROM ceilings WHERE profile_id = ? ORDER BY id", [.integer(id)])
    }

    /// The profile with `machine` as its name and `kind`, newest, if any.
    package func machineProfile(named machine: String, kind: String) throws(WorkspaceError) -> MachineProfileRecord? {
        try database.readStatements { sql in
            try sql.fetch(
                MachineProfileRecord.self,
                "SELECT * FROM machine_profiles WHERE machine = ? AND kind = ? ORDER BY measured_at DESC, id DESC LIMIT 1",
                [.text(machine), .text(kind)]
            ).first
        }
    }

    /// The most recent CPU profile and its ceilings, if any.
    package func latestMachineProfile() throws(WorkspaceError) -> (
        profile: MachineProfileRecord, ceilings: [CeilingRecord]
    )? {
        let found = try database.readStatements { sql -> LatestProfile? in
            guard
                let profile = try sql.fetch(
                    MachineProfileRecord.self,
                    "SELECT * FROM machine_profiles WHERE kind = 'cpu' ORDER BY measured_at DESC, id DESC LIMIT 1"
                ).first,
                let id = profile.id
            else { return nil }
            return LatestProfile(profile: profile, ceilings: try Self.ceilings(profileID: id, sql))
        }
        return found.map { ($0.profile, $0.ceilings) }
    }

    private struct LatestProfile: Sendable {
        var profile: MachineProfileRecord
        var ceilings: [CeilingRecord]
    }

    // MARK: - Kernel runs

    /// Stores the kernels of one run, all or none; returns their ids, in order.
    @discardableResult
    package func record(_ runs: [KernelRun]) throws(WorkspaceError) -> [Int64] {
        try database.writeStatements { sql in
            try runs.map { run in
                guard let id = try sql.insert(run, returningID: true).id else {
                    throw WorkspaceError(.database, path: "kernel_runs", message: "a kernel run was given no id")
                }
                return id
            }
        }
    }

    /// The runs with these ids, in the order asked (ids with no run are left out).
    package func kernelRuns(ids: [Int64]) throws(WorkspaceError) -> [KernelRun] {
        guard !ids.isEmpty else { return [] }
        let found = try database.readStatements { sql in
            try sql.fetch(
                KernelRun.self, "SELECT * FROM kernel_runs WHERE id IN (\(StoreTable.placeholders(ids.count)))",
                ids.map { .integer($0) })
        }
        let byID = Dictionary(found.compactMap { run in run.id.map { ($0, run) } }, uniquingKeysWith: { a, _ in a })
        return ids.compactMap { byID[$0] }
    }

    /// The latest run of every (suite, kernel, workload): what a roofline shows.
    package func latestKernelRunPerShape() throws(WorkspaceError) -> [KernelRun] {
        try database.readStatements { sql in
            try sql.fetch(
                KernelRun.self,
                """
                SELECT * FROM kernel_runs WHERE id IN
                    (SELECT MAX(id) FROM kernel_runs GROUP BY suite, kernel, workload)
                ORDER BY suite, id
                """)
        }
    }

    // MARK: - Approximate-search sweeps

    /// Stores the sweeps of one benchmark run (Loupe's and its peers'), all or none.
    package func record(_ sweeps: [ANNSweepRecord]) throws(WorkspaceError) {
        try database.writeStatements { sql in
            for sweep in sweeps { try sql.insert(sweep) }
        }
    }

    /// The latest sweep of every (workload, engine), by workload and then engine.
    package func latestANNSweeps() throws(WorkspaceError) -> [ANNSweepRecord] {
        try database.readStatements { sql in
            try sql.fetch(
                ANNSweepRecord.self,
                """
                SELECT * FROM ann_sweeps WHERE id IN
                    (SELECT MAX(id) FROM ann_sweeps GROUP BY workload, engine)
                ORDER BY workload, engine
                """)
        }
    }
}
