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
    /// The machine profile whose roofs it is judged against.
    package var profileID: Int64?
    /// FLOPs per precision (`FP32`, `FP64`, `FP16`), when the source counts them apart.
    package var flopsByPrecision: [String: Double]?
    /// Memory the kernel allocated beyond its inputs and outputs.
    package var scratchBytes: Int?
    /// The data its passes re-read, which decides the memory level it is judged against.
    package var footprintBytes: Int?
    /// Bytes moved at each memory level (`L1`, `L2`, `DRAM`), when the source counts them
    /// apart (Nsight Compute): a point per level on a hierarchical roofline.
    package var bytesByLevel: [String: Double]?

    package init(
        suite: String, kernel: String, workload: String, calls: Int, nanoseconds: Int64, flops: Double, bytes: Double,
        threads: Int, machine: String, measuredAt: Date = Date(), profileID: Int64? = nil,
        flopsByPrecision: [String: Double]? = nil, scratchBytes: Int? = nil, footprintBytes: Int? = nil,
        bytesByLevel: [String: Double]? = nil
    ) {
        self.bytesByLevel = bytesByLevel
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
        self.profileID = profileID
        self.flopsByPrecision = flopsByPrecision
        self.scratchBytes = scratchBytes
        self.footprintBytes = footprintBytes
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, suite, kernel, workload, calls, nanoseconds, flops, bytes, threads, machine
        case measuredAt = "measured_at"
        case profileID = "profile_id"
        case flopsByPrecision = "flops_json"
        case scratchBytes = "scratch_bytes"
        case footprintBytes = "footprint_bytes"
        case bytesByLevel = "bytes_json"
    }
}
