import Foundation
import LoupeKit
import LoupeStore
import Testing

/// `roofline import-ncu`, `show` and `export` through the real binary.
@Suite struct RooflineCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LoupeProfilingTests/Fixtures/ncu").path

    @Test func peakSustainedMetricsMakeAGPUProfile() throws {
        let file = TestEnvironment.temporaryDirectory() + "/gpu.sqlite"
        var result = try TestEnvironment.run([
            "--workspace", file, "roofline", "import-ncu", Self.fixtures + "/raw-peaks.csv",
        ])
        #expect(result.status == 0)
        // A second import of the same export keeps one profile and one run per kernel.
        result = try TestEnvironment.run([
            "--workspace", file, "roofline", "import-ncu", Self.fixtures + "/raw-peaks.csv",
        ])
        #expect(result.status == 0)
        #expect(result.output.contains("roofs: NVIDIA H100 80GB HBM3 (ncu raw-peaks.csv), peak_sustained"))
        let model = try RooflineModel.load(from: Workspace(path: file))
        #expect(model.profiles.map(\.name) == ["NVIDIA H100 80GB HBM3 (ncu raw-peaks.csv)"])
        let profile = model.profiles[0]
        #expect(profile.kind == "gpu")
        #expect(profile.peak("FP32")?.value == 16_896 * 2 * 1.755)
        let sgemm = profile.placements("FP32")[0]
        #expect(sgemm.point.name == "ampere_sgemm_128x64_tn")
        #expect(sgemm.bound == "compute")
        #expect(abs(sgemm.fraction! - 0.934) < 0.001)
        // FP64: no kernel has FLOPs of it; both are listed, neither placed.
        #expect(profile.placements("FP64").allSatisfy { $0.gflopsPerSecond == nil })
    }

    /// The SASS peaks have no tensor pipe: a GPU the datasheet table knows gets its tensor roofs
    /// too, marked as the datasheet's.
    @Test func measuredPeaksGainTheDatasheetsTensorRoofs() throws {
        let file = TestEnvironment.temporaryDirectory() + "/tensor.sqlite"
        _ = try TestEnvironment.run(["--workspace", file, "roofline", "import-ncu", Self.fixtures + "/raw-peaks.csv"])
        let profile = try #require(try RooflineModel.load(from: Workspace(path: file)).profiles.first)
        let names = profile.computeCeilings.map(\.name)
        #expect(names.contains("FP32") && names.contains("BF16 tensor") && names.contains("TF32 tensor"))
        #expect(profile.computeCeilings.first { $0.name == "FP32" }?.provenance.hasPrefix("peak_sustained") == true)
        #expect(profile.computeCeilings.first { $0.name == "BF16 tensor" }?.provenance.contains("datasheet") == true)
        #expect(profile.peak("BF16")?.value == 989_400)
    }

    /// A real export with L1, L2 and DRAM bytes: `show` places the kernel at every level, and
    /// `compare` matches the kernels of a second import with the first's.
    @Test func aRealExportShowsEveryLevelAndComparesWithABaseline() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/levels.sqlite"
        let real = TestEnvironment.repositoryRoot.appendingPathComponent(
            "sample-data/ncu/a100-sgemm-splitk-details.csv")
        for name in ["before.csv", "after.csv"] {
            try FileManager.default.copyItem(atPath: real.path, toPath: directory + "/" + name)
            let result = try TestEnvironment.run([
                "--workspace", file, "roofline", "import-ncu", directory + "/" + name, "--gpu", "a100",
            ])
            #expect(result.status == 0, "\(result.error)")
        }
        let show = try TestEnvironment.run(["--workspace", file, "roofline", "show"])
        // 145,408 FLOPs over 384 B of L1, 233,856 B of L2 and 512 B of DRAM (judged at HBM2).
        #expect(
            show.output.contains("per level: L1 379 FLOP/B, L2 0.622 FLOP/B, HBM2 284 FLOP/B"), "\(show.output)")
        // 7,488 ns and 4,224 ns launches: µs and MFLOP/s, not 0.007 ms and 0.0 GFLOP/s (RooflineFormatTests).
        #expect(show.output.contains("7.49 µs 19.4 GFLOP/s") && show.output.contains("4.22 µs 3.79 MFLOP/s"))
        #expect(show.output.contains("HBM2 attainable 19.5 TFLOP/s, 0.10%, compute"), "\(show.output)")
        let compared = try TestEnvironment.run(["--workspace", file, "roofline", "compare", "ncu:before.csv"])
        #expect(compared.output.contains("baseline ncu:before.csv: 2 kernels"))
        #expect(
            compared.output.contains("ncu:after.csv") && compared.output.contains("1.00×   19.4 GFLOP/s → 19.4 GFLOP/s")
        )
        let unknown = try TestEnvironment.run(["--workspace", file, "roofline", "compare", "ncu:nope.csv"])
        #expect(unknown.status != 0 && unknown.error.contains("ncu:nope.csv: no such kernel suite"))
    }

    @Test func theDatasheetGivesRoofsAndIsSharedBetweenImports() throws {
        let file = TestEnvironment.temporaryDirectory() + "/sheet.sqlite"
        for _ in 0..<2 {
            let result = try TestEnvironment.run([
                "--workspace", file, "roofline", "import-ncu", Self.fixtures + "/details-current.csv", "--gpu",
                "h100-pcie",
            ])
            #expect(result.status == 0)
            #expect(result.output.contains("roofs: H100 PCIe 80GB, NVIDIA H100 Tensor Core GPU datasheet"))
        }
        let workspace = try Workspace(path: file)
        #expect(try workspace.roofline.machineProfiles().count == 1)
        let show = try TestEnvironment.run(["--workspace", file, "roofline", "show", "--profile", "pcie"])
        #expect(show.output.contains("BF16 tensor"))
        #expect(show.output.contains("756 TFLOP/s"))
        #expect(show.output.contains("HBM2e"))
        let csv = try TestEnvironment.run(["--workspace", file, "roofline", "export", "-o", "-"])
        #expect(csv.output.hasPrefix("type,name,shape,suite,precision,level"))
        #expect(csv.output.contains("ceiling,HBM2e,,,,HBM2e,,,,,,,2000,GB/s,"))
    }

    /// Exports with the NERSC metric set have no gpu__time_duration: the kernel is kept, and
    /// the user is told its time is unknown instead of reading 0.000 ms as a measurement.
    @Test func kernelsWithoutADurationAreWarnedAbout() throws {
        let file = TestEnvironment.temporaryDirectory() + "/untimed.sqlite"
        let result = try TestEnvironment.run([
            "--workspace", file, "roofline", "import-ncu", Self.fixtures + "/untimed.csv",
        ])
        #expect(result.status == 0)
        #expect(
            result.output.contains(
                "warning: untimed.csv: kernel copy_kernel: no gpu__time_duration.sum, so its time and GFLOP/s are unknown"
            ))
        #expect(result.output.contains("(no FLOP counters)"))
        #expect(!result.output.contains("(null)"))
    }

    @Test func negativeMetricValuesAreRefusedWithTheirLine() throws {
        let file = TestEnvironment.temporaryDirectory() + "/negative.sqlite"
        let export = TestEnvironment.temporaryDirectory() + "/negative.csv"
        try """
        "ID","Kernel Name","Metric Name","Metric Unit","Metric Value"
        "0","k","dram__bytes.sum","byte","-5"

        """.write(toFile: export, atomically: true, encoding: .utf8)
        let result = try TestEnvironment.run(["--workspace", file, "roofline", "import-ncu", export])
        #expect(result.status != 0)
        #expect(
            result.error.contains("negative.csv:2: \"Metric Value\" (dram__bytes.sum): metric value '-5' is negative"))
    }

    @Test func withoutPeaksOrAGPUNameTheKernelsAreKeptWithoutRoofs() throws {
        let file = TestEnvironment.temporaryDirectory() + "/bare.sqlite"
        let result = try TestEnvironment.run([
            "--workspace", file, "roofline", "import-ncu", Self.fixtures + "/raw.csv",
        ])
        #expect(result.status == 0)
        #expect(result.output.contains("no roofs"))
        let model = try RooflineModel.load(from: Workspace(path: file))
        #expect(model.profiles.map(\.name) == ["GPU kernels without roofs"])
        #expect(model.profiles[0].precisions == ["FP32", "FP16"])
        let unknown = try TestEnvironment.run([
            "--workspace", file, "roofline", "import-ncu", Self.fixtures + "/raw.csv", "--gpu", "rtx-4090",
        ])
        #expect(unknown.status != 0)
        #expect(unknown.error.contains("--gpu rtx-4090: not in the datasheet table"))
    }

    @Test func kernelsBenchRejectsABadShapeAndStoresItsRuns() throws {
        let file = TestEnvironment.temporaryDirectory() + "/kernels.sqlite"
        let bad = try TestEnvironment.run([
            "--workspace", file, "kernels", "bench", "--kernel", "gelu", "--shape", "4x4",
        ])
        #expect(bad.status != 0)
        #expect(bad.error.contains("gelu takes COUNT"))
        let unknown = try TestEnvironment.run(["--workspace", file, "kernels", "bench", "--kernel", "matmul-fast"])
        #expect(unknown.error.contains("no kernel named 'matmul-fast'"))
        let run = try TestEnvironment.run([
            "--workspace", file, "kernels", "bench", "--kernel", "matmul-blocked", "--kernel", "matmul-naive",
            "--shape",
            "64x48x32", "--seconds", "0.01",
        ])
        #expect(run.status == 0)
        #expect(run.output.contains("no machine profile in this workspace"))
        let runs = try Workspace(path: file).roofline.latestKernelRunPerShape()
        #expect(runs.map(\.kernel) == ["matmul-blocked", "matmul-naive"])
        #expect(runs.allSatisfy { $0.flops == 2 * 64 * 48 * 32 && $0.workload.hasPrefix("64x48x32, ") })
    }
}
