import Foundation
import LoupeProfiling
import Testing

@Suite struct NsightComputeImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/ncu")

    private func load(_ name: String) throws -> [NsightKernel] {
        try NsightComputeImport.parse(
            String(contentsOf: Self.fixtures.appendingPathComponent(name), encoding: .utf8), file: name)
    }

    /// A real export (an A100 running cuBLAS's split-K sgemm, from a public repository: see
    /// sample-data/ncu/README.md) counts L1, L2 and DRAM bytes apart: each level is kept.
    @Test func aRealExportKeepsTheBytesOfEveryMemoryLevel() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/ncu/a100-sgemm-splitk-details.csv").standardized
        let kernels = try NsightComputeImport.parse(String(contentsOf: path, encoding: .utf8), file: "a100.csv")
        #expect(kernels.map(\.name).first == "ampere_sgemm_32x32_sliced1x4_tn")
        let sgemm = kernels[0]
        #expect(sgemm.nanoseconds == 7488)
        #expect(sgemm.flops["FP32"].map { abs($0 - 145_408) < 1e-9 } == true)  // fadd + fmul + 2 × ffma
        #expect(sgemm.bytes == ["L1": 384, "L2": 233_856, "DRAM": 512])
        #expect(kernels[1].bytes == ["L1": 96, "L2": 142_208, "DRAM": 256])
    }

    /// Each level's peak is its bytes per cycle at its own clock; L1 falls back on the SM clock.
    @Test func peaksOfEveryLevelFromTheirCyclesAndClocks() {
        let peaks = NsightComputeImport.peaks([
            "dram__bytes.sum.peak_sustained": 1280, "dram__cycles_elapsed.avg.per_second": 2.62e9,
            "lts__t_bytes.sum.peak_sustained": 5120, "lts__cycles_elapsed.avg.per_second": 1.755e9,
            "l1tex__t_bytes.sum.peak_sustained": 16_896, "sm__cycles_elapsed.avg.per_second": 1.755e9,
        ])
        #expect(peaks["DRAM"].map { abs($0 - 1280 * 2.62) < 1e-6 } == true)
        #expect(peaks["L2"].map { abs($0 - 5120 * 1.755) < 1e-6 } == true)
        #expect(peaks["L1"].map { abs($0 - 16_896 * 1.755) < 1e-6 } == true)
    }

    @Test func detailsPageAggregatesLaunchesPerKernel() throws {
        let kernels = try load("details-current.csv")
        #expect(
            kernels.map(\.name) == [
                "void gemm_kernel<float, 128, 128>(float const*, float const*, float*, int, int, int)", "relu_kernel",
            ])
        let gemm = kernels[0]
        #expect(gemm.launchIDs == ["0", "1"])
        #expect(gemm.nanoseconds == 1_250_500 + 1_250_000)  // usecond and msecond rows, thousands separator
        #expect(gemm.flops["FP32"] == Double(2 * 2 * 8_589_934_592))  // 2 × ffma, two launches
        #expect(gemm.bytes["DRAM"] == Double(2 * 52_430_000))
        #expect(gemm.device == "0")
        let relu = kernels[1]
        #expect(relu.flops["FP32"] == 1_048_576)
        #expect(abs(relu.nanoseconds - 20_480) < 1e-6)
    }

    @Test func olderDetailsLayoutWithKernelTimeAndTrailingCommas() throws {
        let kernels = try load("details-2021.csv")
        #expect(kernels.count == 1)
        #expect(kernels[0].nanoseconds == 9_216)
        #expect(kernels[0].flops["FP64"] == 524_288)
        #expect(abs((kernels[0].bytes["DRAM"] ?? 0) - 3_145_730) < 1e-3)
    }

    @Test func rawPageReadsTheUnitsRow() throws {
        let kernels = try load("raw.csv")
        #expect(kernels.map(\.name) == ["flash_attention_fwd", "softmax_kernel"])
        #expect(kernels[0].flops["FP16"] == Double(2 * 8_589_934_592))
        #expect(kernels[0].flops["FP32"] == 0)
        #expect(kernels[0].bytes["L2"] == 4.29e9)
        #expect(abs(kernels[0].nanoseconds - 512_250) < 1e-6)
        #expect(kernels[1].flops["FP32"] == Double(2 * 16_777_216))
    }

    @Test func aFileWithoutAHeaderNamesThePermissionError() {
        let error = #expect(throws: NsightImportError.self) { try load("errperm.txt") }
        #expect(error?.message.contains("ERR_NVGPUCTRPERM") == true)
        let other = #expect(throws: NsightImportError.self) {
            try NsightComputeImport.parse("hello\nworld\n", file: "x.csv")
        }
        #expect(other?.message.contains("no CSV header") == true)
    }

    @Test func badValuesNameTheLine() {
        let text =
            "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\"0\",\"k\",\"gpu__time_duration.sum\",\"usecond\",\"12x4\"\n"
        let error = #expect(throws: NsightImportError.self) { try NsightComputeImport.parse(text, file: "bad.csv") }
        #expect(error?.description.hasPrefix("bad.csv:2: ") == true)
    }

    @Test(arguments: [
        ("52,428,800", "byte", 52_428_800.0), ("1.234,5", "byte", 1_234.5), ("3,5", "usecond", 3_500.0),
        ("2.5", "Gbyte", 2.5e9),
    ])
    func numbersAndUnits(text: String, unit: String, expected: Double) throws {
        #expect(try NsightComputeImport.number(text, unit: unit, file: "f", line: 1) == expected)
    }

    @Test func longDemangledNamesSurviveQuotedCommas() {
        let name = "void k<" + String(repeating: "int, ", count: 1000) + "int>(float*)"
        let fields = NsightComputeImport.splitCSV("\"0\",\"\(name)\",\"a \"\"quoted\"\" word\"")
        #expect(fields == ["0", name, "a \"quoted\" word"])
    }
    private static let detailsHeader =
        "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"

    /// Non-numeric and negative values were read as 0 (or stored negative) without a word.
    @Test(arguments: [
        ("dram__bytes.sum", "byte", "abc", "is not a number"),
        ("dram__bytes.sum", "byte", "-5", "is negative (counts, bytes and times cannot be)"),
        ("gpu__time_duration.sum", "nsecond", "inf", "is not a number"),
        ("gpu__time_duration.sum", "nsecond", "nan", "is not a number"),
        ("gpu__time_duration.sum", "second", "1e300", "is too large"),
    ])
    func badMetricValuesNameTheLineColumnAndValue(metric: String, unit: String, value: String, problem: String) {
        let text = Self.detailsHeader + "\"0\",\"k\",\"\(metric)\",\"\(unit)\",\"\(value)\"\n"
        let error = #expect(throws: NsightImportError.self) { try NsightComputeImport.parse(text, file: "bad.csv") }
        #expect(
            error?.description == "bad.csv:2: \"Metric Value\" (\(metric)): metric value '\(value)' \(problem)")
    }

    @Test func metricsLoupeDoesNotReadMayBeText() throws {
        let text =
            Self.detailsHeader + "\"0\",\"k\",\"launch__func_cache_config\",\"\",\"CachePreferNone\"\n"
            + "\"0\",\"k\",\"gpu__time_duration.sum\",\"nsecond\",\"n/a\"\n"
        let kernels = try NsightComputeImport.parse(text, file: "ok.csv")
        #expect(kernels.map(\.name) == ["k"])
    }

    @Test func kernelsWithoutADurationAreMarkedUntimed() throws {
        let text =
            Self.detailsHeader + "\"0\",\"k\",\"dram__bytes.sum\",\"byte\",\"1024\"\n"
            + "\"1\",\"k\",\"gpu__time_duration.sum\",\"nsecond\",\"2000\"\n"
            + "\"2\",\"j\",\"dram__bytes.sum\",\"byte\",\"1024\"\n"
        let kernels = try NsightComputeImport.parse(text, file: "a100.csv")
        #expect(kernels.map(\.timedLaunches) == [1, 0])
        #expect(kernels.map(\.launchIDs.count) == [2, 1])
    }

    @Test func aDurationPastInt64NanosecondsIsAnError() {
        let text =
            Self.detailsHeader + "\"0\",\"k\",\"gpu__time_duration.sum\",\"second\",\"9e9\"\n"
            + "\"1\",\"k\",\"gpu__time_duration.sum\",\"second\",\"9e9\"\n"
        let error = #expect(throws: NsightImportError.self) { try NsightComputeImport.parse(text, file: "x.csv") }
        #expect(error?.description.contains("more than 292 years") == true)
    }

    @Test func aShortRawRowIsAnErrorNotATrap() {
        let text =
            "\"ID\",\"Process ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"\",\"nsecond\"\n\"0\"\n"
        let error = #expect(throws: NsightImportError.self) { try NsightComputeImport.parse(text, file: "raw.csv") }
        #expect(error?.description.hasPrefix("raw.csv:3: ") == true)
    }
}
