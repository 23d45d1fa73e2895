import Foundation
import LoupeKit
import LoupeProfiling
import LoupeStore
import Testing

/// The Roofline panel's port on the sample Nsight Compute export (a hand-written H100 sgemm with
/// the device's peak_sustained metrics) and on measured CPU kernels.
@Suite struct RooflineBrowserTests {
    static let export = KitFixtures.path("sample-data/ncu/h100-sgemm-raw.csv")

    /// Stores the export's kernels as `loupe roofline import-ncu` does: a GPU profile with roofs
    /// from the peak_sustained metrics, and one kernel run per kernel judged against it
    /// (`roofs: false` leaves the profile out).
    static func importExport(into workspace: Workspace, roofs: Bool = true) throws -> [NsightKernel] {
        let file = (export as NSString).lastPathComponent
        let kernels = try NsightComputeImport.parse(String(contentsOfFile: export, encoding: .utf8), file: file)
        var profileID: Int64?
        if roofs {
            var peaks: [String: Double] = [:]
            for kernel in kernels { peaks.merge(kernel.peaks) { max($0, $1) } }
            var ceilings = peaks.filter { $0.key != "DRAM" }.sorted { $0.key < $1.key }.map {
                CeilingRecord(kind: "compute", name: $0.key, value: $0.value, provenance: file, precision: $0.key)
            }
            if let dram = peaks["DRAM"] {
                ceilings.append(CeilingRecord(kind: "memory", name: "DRAM", value: dram, provenance: file))
            }
            profileID = try workspace.roofline.record(
                MachineProfileRecord(machine: "H100 (ncu \(file))", cores: 0, sweepJSON: "[]", kind: "gpu"),
                ceilings: ceilings)
        }
        try workspace.roofline.record(
            kernels.map { kernel in
                KernelRun(
                    suite: "ncu:\(file)", kernel: kernel.name,
                    workload: "launches \(kernel.launchIDs.joined(separator: ","))", calls: kernel.launchIDs.count,
                    nanoseconds: Int64(kernel.nanoseconds.rounded()), flops: kernel.flops.values.reduce(0, +),
                    bytes: kernel.bytes["DRAM"] ?? 0, threads: 1, machine: "H100", profileID: profileID,
                    flopsByPrecision: kernel.flops)
            })
        return kernels
    }

    /// This CPU's bandwidth sweep, which places each memory roof's range of sizes, is read with
    /// the profile; one that does not parse is named on it, and the roofs still show.
    @Test func aSweepThatDoesNotParseIsNamedAndTheRoofsStillShow() throws {
        let workspace = try KitFixtures.workspace("roofline")
        let id = try workspace.roofline.record(
            MachineProfileRecord(machine: "test cpu", cores: 2, sweepJSON: "[]", kind: "cpu"),
            ceilings: [
                CeilingRecord(kind: "memory", name: "DRAM", value: 2e10, provenance: "measured"),
                CeilingRecord(kind: "compute", name: "FP32", value: 1e11, provenance: "measured", precision: "FP32"),
            ])
        let intact = try #require(try RooflineBrowser(workspace: workspace).model().profiles.first)
        #expect(intact.unreadable.isEmpty && intact.ceilings.count == 2)
        _ = try workspace.writeStatements { sql in
            try sql.execute("UPDATE machine_profiles SET sweep_json = '[{' WHERE id = ?", [.integer(id)])
        }
        let damaged = try #require(try RooflineBrowser(workspace: workspace).model().profiles.first)
        #expect(
            damaged.unreadable.map(\.headline) == [
                "unreadable bandwidth sweep (machine profile \(id) (test cpu), column sweep_json)"
            ])
        #expect(damaged.ceilings == intact.ceilings)
    }

    @Test func anEmptyWorkspaceHasNoProfiles() throws {
        let browser = RooflineBrowser(workspace: try KitFixtures.workspace("roofline"))
        #expect(try browser.model().profiles.isEmpty)
    }

    @Test func anImportedExportIsAGPUProfileWithItsKernelsUnderItsRoofs() throws {
        let workspace = try KitFixtures.workspace("roofline")
        let kernels = try Self.importExport(into: workspace)
        let model = try RooflineBrowser(workspace: workspace).model()
        #expect(model.profiles.count == 1)
        let gpu = try #require(model.profiles.first)
        #expect(gpu.kind == "gpu" && gpu.name.contains("H100"))
        #expect(gpu.points.map(\.name) == kernels.map(\.name))
        #expect(gpu.points.map(\.name).contains("ampere_sgemm_128x64_tn"))
        #expect(gpu.memoryCeilings.map(\.name) == ["DRAM"])
        let fp32 = try #require(gpu.peak("FP32"))
        // 16,896 FFMA per cycle at 1.755 GHz, two FLOPs each: about 59 TFLOP/s.
        #expect(abs(fp32.value - 2 * 16_896 * 1.755) < 1)
        #expect(gpu.precisions.first == "FP32")

        // The sgemm lands under the compute roof, near it (the export's ~55 TFLOP/s).
        let sgemm = try #require(gpu.placements("FP32").first { $0.point.name == "ampere_sgemm_128x64_tn" })
        let rate = try #require(sgemm.gflopsPerSecond)
        #expect(rate > 50_000 && rate < fp32.value)
        #expect(sgemm.bound == "compute" && (sgemm.fraction ?? 0) > 0.8 && (sgemm.fraction ?? 2) <= 1)
    }

    @Test func importedKernelsWithoutRoofsAreListedApart() throws {
        let workspace = try KitFixtures.workspace("roofline")
        let kernels = try Self.importExport(into: workspace, roofs: false)
        let model = try RooflineBrowser(workspace: workspace).model()
        let orphans = try #require(model.profiles.first)
        #expect(model.profiles.count == 1)
        #expect(orphans.name == "GPU kernels without roofs" && orphans.ceilings.isEmpty)
        #expect(orphans.points.count == kernels.count)
    }

    @Test func theCPUProfileComesFirstWithOnlyTheCPUKernels() throws {
        let workspace = try KitFixtures.workspace("roofline")
        _ = try Self.importExport(into: workspace)
        try workspace.roofline.record(
            MachineProfileRecord(machine: "this cpu", cores: 2, sweepJSON: "[]"),
            ceilings: [
                CeilingRecord(kind: "compute", name: "FP32", value: 200, provenance: "measured"),
                CeilingRecord(kind: "memory", name: "DRAM", value: 20, provenance: "measured"),
            ])
        try workspace.roofline.record([
            KernelRun(
                suite: "kernels", kernel: "sgemm", workload: "256x256x256, 2 threads", calls: 10,
                nanoseconds: 2_000_000, flops: 2 * 256 * 256 * 256 * 10, bytes: 3 * 256 * 256 * 4 * 10, threads: 2,
                machine: "this cpu")
        ])
        let model = try RooflineBrowser(workspace: workspace).model()
        #expect(model.profiles.map(\.kind) == ["cpu", "gpu"])
        let cpu = model.profiles[0]
        #expect(cpu.points.map(\.name) == ["sgemm"] && cpu.points[0].shape == "256x256x256")
        // The time is per thread: 2 ms summed over 2 threads.
        #expect(cpu.points[0].seconds == 0.001)
        #expect(cpu.peak("FP32")?.value == 200)
    }
}
