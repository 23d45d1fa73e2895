import Foundation
import LoupeProfiling
import LoupeStore

extension RooflineModel {
    /// The workspace's roofline: this CPU's latest profile with every CPU kernel run (the latest
    /// per kernel and shape; without roofs when the CPU was never measured), then each GPU profile
    /// with the kernels imported against it, then imported kernels that have no roofs. `runs` named here take the place of the latest
    /// of their kernel and shape (an older forward pass a trace step points at).
    package static func load(from workspace: Workspace, including chosen: [Int64] = [])
        throws(WorkspaceError) -> RooflineModel
    {
        try load(from: workspace.roofline, including: chosen)
    }

    /// The roofline of the tables on either backend (a SQLite file or PostgreSQL).
    package static func load(from workspace: RooflineTables, including chosen: [Int64] = [])
        throws(WorkspaceError) -> RooflineModel
    {
        var runs = try workspace.latestKernelRunPerShape()
        if !chosen.isEmpty {
            let extra = try workspace.kernelRuns(ids: chosen)
            let shapes = Set(extra.map { [$0.suite, $0.kernel, $0.workload] })
            runs = runs.filter { !shapes.contains([$0.suite, $0.kernel, $0.workload]) } + extra
        }
        let stored = try workspace.machineProfiles()
        let gpuIDs = Set(stored.filter { $0.kind == "gpu" }.compactMap(\.id))
        let isGPU = { (run: KernelRun) in
            run.profileID.map(gpuIDs.contains) ?? run.suite.hasPrefix("ncu:")
        }
        let cpuRuns = runs.filter { !isGPU($0) }
        var profiles: [Profile] = []
        if let cpu = stored.first(where: { $0.kind == "cpu" }), let id = cpu.id {
            var unreadable: [StoredValueError] = []
            var sweep: [BandwidthSample] = []
            do { sweep = try BandwidthSample.sweep(fromJSON: cpu.sweepJSON) } catch {
                // The roofs still show; what is lost is the range of sizes each memory roof holds over.
                unreadable.append(
                    StoredValueError(
                        "bandwidth sweep", row: "machine profile \(id) (\(cpu.machine))", column: "sweep_json",
                        reason: "\(error)"))
            }
            let plateaus = PlateauDetector.plateaus(sweep)
            let ceilings = try workspace.ceilings(profileID: id).filter { !$0.name.contains("1 core") }.map {
                record in
                let plateau = plateaus.first { $0.level == record.name && record.kind == "memory" }
                return Ceiling(
                    kind: record.kind, name: record.name, value: record.value,
                    precision: record.precision ?? (record.kind == "compute" ? "FP32" : nil),
                    provenance: record.provenance, smallestBytes: plateau?.smallestBytes,
                    largestBytes: plateau?.largestBytes)
            }
            var profile = Profile(name: cpu.machine, kind: "cpu", ceilings: ceilings, points: cpuRuns.map(point))
            profile.unreadable = unreadable
            profiles.append(profile)
        }
        if !stored.contains(where: { $0.kind == "cpu" }), !cpuRuns.isEmpty {
            profiles.append(
                Profile(name: "CPU kernels without roofs", kind: "cpu", ceilings: [], points: cpuRuns.map(point)))
        }
        for gpu in stored where gpu.kind == "gpu" {
            guard let id = gpu.id else { continue }
            let points = runs.filter { $0.profileID == id }.map(point)
            guard !points.isEmpty else { continue }
            let ceilings = try workspace.ceilings(profileID: id).map {
                Ceiling(
                    kind: $0.kind, name: $0.name, value: $0.value, precision: $0.precision, provenance: $0.provenance)
            }
            profiles.append(Profile(name: gpu.machine, kind: "gpu", ceilings: ceilings, points: points))
        }
        let orphans = runs.filter { isGPU($0) && $0.profileID == nil }
        if !orphans.isEmpty {
            profiles.append(
                Profile(name: "GPU kernels without roofs", kind: "gpu", ceilings: [], points: orphans.map(point)))
        }
        return RooflineModel(profiles: profiles)
    }

    /// A stored run as a point: time per run (MiniLM's is summed over its threads), FLOPs by
    /// precision (our kernels are FP32).
    private static func point(_ run: KernelRun) -> Point {
        Point(
            // `kernels bench` writes "SHAPE, N threads"; the shape is what the table shows.
            name: run.kernel, suite: run.suite,
            shape: run.workload.components(separatedBy: ", ").first ?? run.workload,
            seconds: Double(run.nanoseconds) / 1e9 / Double(max(1, run.threads)),
            flops: run.flopsByPrecision ?? ["FP32": run.flops], bytes: run.bytes, footprintBytes: run.footprintBytes,
            bytesByLevel: run.bytesByLevel ?? [:], runID: run.id)
    }
}
