import Foundation
import GRDB

/// One measured kernel: its time, analytic FLOPs and bytes over a run, and where it ran. The
/// Roofline panel places each as GFLOP/s (flops / time) against FLOP/byte (flops / bytes).
package struct KernelRun: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "kernel_runs"
    package var id: Int64?
    /// What produced it, e.g. `minilm-forward`.
    package var suite: String
    package var kernel: String
    /// The shapes it ran on, in words.
    package var workload: String
    package var calls: Int
    package var nanoseconds: Int64
    package var flops: Double
    package var bytes: Double
    /// Threads the time is summed over (batches ran concurrently, one per core).
    package var threads: Int
    package var machine: String
    package var measuredAt: Date

    package init(
        suite: String, kernel: String, workload: String, calls: Int, nanoseconds: Int64, flops: Double, bytes: Double,
        threads: Int, machine: String, measuredAt: Date = Date()
    ) {
        self.suite = suite
        self.kernel = kernel
        self.workload = workload
        self.calls = calls
        self.nanoseconds = nanoseconds
        self.flops = flops
        self.bytes = bytes
        self.threads = threads
        self.machine = machine
        self.measuredAt = measuredAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, suite, kernel, workload, calls, nanoseconds, flops, bytes, threads, machine
        case measuredAt = "measured_at"
    }
}

extension Workspace {
    /// Stores the kernels of one run, all or none.
    package func record(_ runs: [KernelRun]) throws(WorkspaceError) {
        try write { db in
            for var run in runs { try run.insert(db) }
        }
    }

    /// The kernels of `suite`'s most recent run.
    package func latestKernelRuns(suite: String) throws(WorkspaceError) -> [KernelRun] {
        try read { db in
            guard
                let latest = try Date.fetchOne(
                    db, sql: "SELECT MAX(measured_at) FROM kernel_runs WHERE suite = ?", arguments: [suite])
            else { return [] }
            return try KernelRun.filter(Column("suite") == suite && Column("measured_at") == latest).order(
                Column("nanoseconds").desc
            ).fetchAll(db)
        }
    }
}
