import Foundation
import LoupeBase
import LoupeProfiling
import LoupeStore

/// A profile's matrix multiplies with recorded shapes, each shape's attained FLOP/s: the GPU
/// kernels an operator launched (joined by its `External id`) timed on the GPU, or on a CPU-only
/// trace the operator itself timed on the host. Every event counts (no step window).
package struct ProfileGEMMs: Codable, Hashable, Sendable {
    package var id: Int64
    package var name: String
    /// `GPU` when the multiplies' kernels were found, else `CPU`.
    package var device: String
    /// The GPU as the trace names it (`deviceProperties`), nil for a CPU trace.
    package var deviceName: String?
    package var rows: [Row]
    /// Multiplies whose operator had no recorded shapes (`record_shapes` was off).
    package var unshaped: Int

    package struct Row: Codable, Hashable, Sendable {
        package var rank: Int
        package var operatorName: String
        package var shape: GEMMShape
        package var count: Int
        package var totalNs: Int64
        package var flopsEach: Double
        package var gflopsPerSecond: Double { totalNs > 0 ? flopsEach * Double(count) / Double(totalNs) : 0 }
    }
}

extension ProfileService {
    package func gemms(_ record: ProfilerTraceRecord) throws -> ProfileGEMMs {
        let id = record.id ?? 0
        let names = ProfileNames(try profiles.profilerNames(traceID: id))
        let ids = Set(GEMMShape.operators.keys.compactMap { names.id(of: $0) })
        // Each rank's GPU time per External id: the kernels an operator launched.
        var gpu: [Int: [Int64: Int64]] = [:]
        for row in try profiles.profilerEvents(traceID: id, kinds: [Int(ProfileEventKind.kernel.rawValue)])
        where row.externalID != 0 {
            gpu[row.rank, default: [:]][row.externalID, default: 0] += max(0, row.durationNs)
        }
        struct Key: Hashable {
            var rank: Int
            var name: Int32
            var shape: GEMMShape
        }
        var groups: [Key: (count: Int, ns: Int64)] = [:]
        var unshaped = 0
        var onGPU = false
        let rows = try profiles.profilerEvents(
            traceID: id, kinds: [Int(ProfileEventKind.cpuOp.rawValue)], withArgs: true)
        for row in rows where ids.contains(row.name) {
            // Args that do not read back name the event: a damaged row is not an unshaped multiply.
            let args = try row.args.map { json throws(StoredValueError) in
                try JSONValue.parse(
                    stored: json, "args", row: "profile \(id), rank \(row.rank), event \(row.index)", column: "args")
            }
            guard let args, let shape = GEMMShape(operator: names[row.name], args: args) else {
                unshaped += 1
                continue
            }
            let time: Int64
            if let kernels = gpu[row.rank]?[row.externalID] {
                time = kernels
                onGPU = true
            } else if gpu[row.rank]?.isEmpty ?? true {
                time = max(0, row.durationNs)
            } else {
                // A GPU trace whose operator launched nothing (a multiply of empty tensors).
                continue
            }
            let key = Key(rank: row.rank, name: row.name, shape: shape)
            groups[key, default: (0, 0)].count += 1
            groups[key, default: (0, 0)].ns += time
        }
        let out = groups.map { key, value in
            ProfileGEMMs.Row(
                rank: key.rank, operatorName: names[key.name], shape: key.shape, count: value.count,
                totalNs: value.ns, flopsEach: key.shape.flops)
        }
        .sorted { ($0.totalNs, $1.shape.label) > ($1.totalNs, $0.shape.label) }
        // The GPU's name is read only for a GPU trace; files that do not read back name the profile.
        var deviceName: String?
        if onGPU { deviceName = try ProfileFiles(record).deviceName }
        return ProfileGEMMs(
            id: id, name: record.name, device: onGPU ? "GPU" : "CPU", deviceName: deviceName, rows: out,
            unshaped: unshaped)
    }
}
