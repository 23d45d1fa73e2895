import Foundation
import LoupeProfiling
import LoupeTensor
import Testing

@Suite struct GPUPeaksTests {
    private func load(_ name: String) throws -> [NsightKernel] {
        try NsightComputeImport.parse(
            String(contentsOf: NsightComputeImportTests.fixtures.appendingPathComponent(name), encoding: .utf8),
            file: name)
    }

    @Test func peakSustainedMetricsGiveTheDeviceCeilings() throws {
        let kernels = try load("raw-peaks.csv")
        #expect(kernels.map(\.name) == ["ampere_sgemm_128x64_tn", "vectorized_elementwise_kernel"])
        #expect(kernels[0].device == "NVIDIA H100 80GB HBM3")
        #expect(kernels[0].launchIDs == ["0", "1"])
        // 16,896 FFMA/cycle × 2 × 1.755 GHz; 8,448 DFMA/cycle likewise; 1,280 B/cycle × 2.62 GHz.
        #expect(abs(kernels[0].peaks["FP32"]! - 16_896 * 2 * 1.755) < 1e-6)
        #expect(abs(kernels[0].peaks["FP64"]! - 8_448 * 2 * 1.755) < 1e-6)
        #expect(abs(kernels[0].peaks["DRAM"]! - 1_280 * 2.62) < 1e-6)
        // Two launches of 2 × 8.59e9 FLOPs (a 2048³ sgemm each) in 620.32 µs.
        #expect(kernels[0].flops["FP32"] == Double(2 * 2 * 8_589_934_592))
        #expect(abs(kernels[0].nanoseconds - 620_320) < 1e-6)
        #expect(kernels[1].flops["FP32"] == Double(2 * 33_554_432))
    }

    @Test func exportsWithoutPeaksHaveNone() throws {
        #expect(try load("raw.csv").allSatisfy { $0.peaks.isEmpty })
    }

    @Test(arguments: [
        ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB"), ("NVIDIA H100 PCIe", "H100 PCIe 80GB"),
        ("h100-pcie", "H100 PCIe 80GB"),
        ("NVIDIA H200", "H200 SXM 141GB"), ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"), ("NVIDIA A100-SXM4-40GB", "A100 40GB"),
        ("a100-80gb", "A100 SXM4 80GB"),
    ])
    func datasheetMatchesDeviceNames(text: String, expected: String) {
        #expect(GPUDatasheet.matching(text)?.name == expected)
    }

    @Test func datasheetFiguresAreDenseAndInGigaUnits() {
        let h100 = GPUDatasheet.matching("h100")!
        #expect(h100.compute.first { $0.name == "FP32" }?.gflops == 67_000)
        #expect(h100.compute.first { $0.name == "BF16 tensor" }?.gflops == 989_400)
        #expect(h100.memoryGigabytesPerSecond == 3_350)
        #expect(GPUDatasheet.matching("NVIDIA GeForce RTX 4090") == nil)
        #expect(GPUDatasheet.matching("a100")!.compute.contains { $0.precision == "FP8" } == false)
    }
}

@Suite struct RoofsTests {
    let roofs = Roofs(
        peak: 200,
        levels: [
            BandwidthPlateau(
                level: "DRAM", gigabytesPerSecond: 35, smallestBytes: 64 << 20, largestBytes: 1 << 30, samples: 5),
            BandwidthPlateau(
                level: "L1", gigabytesPerSecond: 300, smallestBytes: 16 << 10, largestBytes: 64 << 10, samples: 3),
            BandwidthPlateau(
                level: "L3", gigabytesPerSecond: 150, smallestBytes: 2 << 20, largestBytes: 16 << 20, samples: 4),
        ])

    @Test func workingSetsGoToTheLevelThatHoldsThem() {
        #expect(roofs.levels.map(\.level) == ["L1", "L3", "DRAM"])
        #expect(roofs.level(forWorkingSet: 32 << 10)?.level == "L1")
        #expect(roofs.level(forWorkingSet: 1 << 20)?.level == "L3")  // between plateaus: the slower one
        #expect(roofs.level(forWorkingSet: 32 << 20)?.level == "DRAM")
        #expect(roofs.level(forWorkingSet: 8 << 30)?.level == "DRAM")  // past the sweep
    }

    @Test func attainableAndBoundFollowTheRidge() {
        let dram = roofs.level(forWorkingSet: 1 << 30)!
        #expect(abs(roofs.ridge(dram)! - 200.0 / 35) < 1e-12)
        #expect(roofs.attainable(flopsPerByte: 1, at: dram) == 35)
        #expect(roofs.attainable(flopsPerByte: 100, at: dram) == 200)
        #expect(roofs.bound(flopsPerByte: 1, at: dram) == "memory")
        #expect(roofs.bound(flopsPerByte: 10, at: dram) == "compute")
        // An int8 kernel is judged against the int8 roof, and not at all without one.
        #expect(roofs.attainable(flopsPerByte: 100, at: dram, precision: "INT8") == nil)
        let withInt8 = Roofs(peak: 200, int8Peak: 800, levels: roofs.levels)
        #expect(withInt8.attainable(flopsPerByte: 100, at: dram, precision: "INT8") == 800)
        #expect(withInt8.bound(flopsPerByte: 10, at: dram, precision: "INT8") == "memory")
    }
}

@Suite struct KernelBenchTests {
    @Test func everyKernelHasAUniqueNameAndAcceptsItsDefaults() {
        #expect(Set(KernelBench.all.map(\.name)).count == KernelBench.all.count)
        for spec in KernelBench.all {
            #expect(spec.defaultShapes.allSatisfy(spec.accepts), "\(spec.name)")
        }
        #expect(KernelBench.spec(named: "matmul-blocked")!.accepts([3, 4, 5]))
        #expect(!KernelBench.spec(named: "matmul-blocked")!.accepts([3, 4]))
        #expect(!KernelBench.spec(named: "gelu")!.accepts([0]))
    }

    @Test func aMeasurementCarriesTheAnalyticCost() {
        let m = KernelBench.measure(
            KernelBench.spec(named: "matmul-blocked")!, shape: [30, 20, 10], threads: 2, seconds: 0.01)
        #expect(m.flops == Double(2 * 30 * 20 * 10))
        let elements: Int = 30 * 10 + 10 * 20 + 30 * 20
        #expect(m.bytes == Double(4 * elements))
        #expect(m.workingSetBytes == 4 * elements)
        #expect(m.repeats >= 2 && m.seconds > 0)
        #expect(m.shape == "30x20x10")
    }

    @Test func softmaxFootprintIsTheRowsInFlight() {
        let m = KernelBench.measure(
            KernelBench.spec(named: "softmax-online")!, shape: [8, 1000], threads: 2, seconds: 0.01)
        #expect(m.footprintBytes == 2 * 1000 * 8)
        #expect(m.bytes == 12 * 8 * 1000)
    }

    @Test func attentionScratchIsPerHead() {
        let naive = KernelBench.measure(
            KernelBench.spec(named: "attention-naive")!, shape: [64, 16], threads: 2, seconds: 0.01)
        let flash = KernelBench.measure(
            KernelBench.spec(named: "attention-flash")!, shape: [64, 16], threads: 2, seconds: 0.01)
        #expect(naive.scratchBytes == 2 * 64 * 64 * 4)
        #expect(flash.scratchBytes == 2 * CPUKernels.attentionScratchBytes(.flash, length: 64, headSize: 16))
        #expect(naive.flops == flash.flops)
        #expect(flash.bytes < naive.bytes)
    }

    @Test func accuracyChecksAreSmall() {
        #expect(KernelBench.attentionDifference(.naive, .flash, length: 100, headSize: 32) < 1e-5)
        let error = KernelBench.int8RelativeError(m: 40, n: 50, k: 60)
        #expect(error > 0 && error < 0.01)
    }
}
