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

    /// NERSC's metric set has no duration: time is cycles ÷ clock (the `sm__` pair, else the
    /// `smsp__` one), a measured duration still wins, and cycles without a clock are no time.
    @Test func timeComesFromCyclesWhenTheDurationIsAbsent() throws {
        let text =
            Self.detailsHeader + "\"0\",\"sm\",\"sm__cycles_elapsed.avg\",\"cycle\",\"2,000\"\n"
            + "\"0\",\"sm\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/usecond\",\"1,000\"\n"
            // A zero sm__ clock is no clock: the smsp__ pair is used.
            + "\"1\",\"smsp\",\"sm__cycles_elapsed.avg\",\"cycle\",\"2000\"\n"
            + "\"1\",\"smsp\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/second\",\"0\"\n"
            + "\"1\",\"smsp\",\"smsp__cycles_elapsed.avg\",\"cycle\",\"3000\"\n"
            + "\"1\",\"smsp\",\"smsp__cycles_elapsed.avg.per_second\",\"cycle/second\",\"1.5e9\"\n"
            // A duration is preferred to cycles; the kernel's second launch has only cycles.
            + "\"2\",\"mixed\",\"gpu__time_duration.sum\",\"nsecond\",\"700\"\n"
            + "\"2\",\"mixed\",\"sm__cycles_elapsed.avg\",\"cycle\",\"9000\"\n"
            + "\"2\",\"mixed\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/second\",\"1e9\"\n"
            + "\"3\",\"mixed\",\"sm__cycles_elapsed.avg\",\"cycle\",\"1000\"\n"
            + "\"3\",\"mixed\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/second\",\"1e9\"\n"
        let kernels = try NsightComputeImport.parse(text, file: "nersc.csv")
        #expect(kernels.map(\.name) == ["sm", "smsp", "mixed"])
        #expect(kernels.map(\.nanoseconds) == [2_000, 2_000, 700 + 1_000])
        #expect(kernels.map(\.timedLaunches) == [1, 1, 2])
        #expect(kernels.map(\.timeSources) == [[.smCycles], [.smspCycles], [.duration, .smCycles]])
        // Cycles without their clock (untimed.csv) are still no time.
        let untimed = try load("untimed.csv")
        #expect(untimed.map(\.timedLaunches) == [0])
        #expect(untimed.map(\.timeSources) == [[]])
        #expect(untimed.map(\.nanoseconds) == [0])
    }

    /// The SASS counters are read in their `sm__` or `smsp__` form (never both), the tensor pipe's
    /// instructions count as 512 FLOPs each under `Tensor`, and each precision says its source.
    @Test func flopsPerPrecisionIncludingTheTensorPipeNameTheirSource() throws {
        let text =
            Self.detailsHeader
            + "\"0\",\"k\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"inst\",\"100\"\n"
            + "\"0\",\"k\",\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"inst\",\"100\"\n"
            + "\"0\",\"k\",\"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"inst\",\"7\"\n"
            + "\"0\",\"k\",\"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum\",\"inst\",\"0\"\n"
            + "\"0\",\"k\",\"smsp__inst_executed_pipe_tensor.sum\",\"inst\",\"3\"\n"
            + "\"1\",\"copy\",\"dram__bytes.sum\",\"byte\",\"64\"\n"
        let kernels = try NsightComputeImport.parse(text, file: "flops.csv")
        #expect(kernels[0].flops == ["FP32": 7 + 2 * 100, "FP16": 0, "Tensor": 3 * 512])
        #expect(kernels[0].flopSources == ["FP32": .sassCounters, "FP16": .sassCounters, "Tensor": .tensorPipe])
        #expect(NsightComputeImport.tensorFLOPsPerInstruction == 512)
        #expect(kernels[1].flops.isEmpty && kernels[1].flopSources.isEmpty)
        // An export with gpu__time_duration says so, and its FLOPs are the SASS counters'.
        let measured = try load("details-current.csv")
        #expect(measured.map(\.timeSources) == [[.duration], [.duration]])
        #expect(measured[0].flopSources == ["FP32": .sassCounters])
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

    // MARK: - Real exports of the NERSC metric set

    static let nerscFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/ncu-nersc")

    /// One file's entry in `Fixtures/ncu-nersc/expected.json` (written by `expected.py`); null
    /// figures (the export lacks their metrics) decode as nil.
    private struct Expected: Decodable {
        struct Launch: Decodable {
            var id: String
            var timeSource: String?
        }
        struct Kernel: Decodable {
            var kernelName: String
            var launchIds: [String]
            var timeSeconds: Double?
            var flopsByPrecision: [String: Double?]
            var bytesByLevel: [String: Double?]
        }
        var file: String
        var tensorFlopsPerInst: Double
        var launches: [Launch]
        var kernelsAggregatedByName: [Kernel]

        static func all() throws -> [Expected] {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode(
                [Expected].self, from: Data(contentsOf: nerscFixtures.appendingPathComponent("expected.json")))
        }
    }

    static let nerscFiles = [
        "gardenia-sgemm-a100-smsp.csv", "gene-dgdxy-v100-time-dram-rank1.csv", "leleucas-conv2d-a100-sections.csv",
    ]

    /// Every export in the folder is checked, and has an expectation.
    @Test func everyNERSCExportHasAnExpectation() throws {
        let csvs = try FileManager.default.contentsOfDirectory(atPath: Self.nerscFixtures.path).filter {
            $0.hasSuffix(".csv")
        }
        #expect(csvs.sorted() == Self.nerscFiles)
        #expect(try Expected.all().map(\.file).sorted() == Self.nerscFiles)
    }

    /// Each kernel's time (cycles ÷ clock), FLOPs per precision (Tensor included) and bytes per
    /// level match `expected.py`'s reading of the same export, as do their sources.
    @Test(arguments: nerscFiles)
    func aNERSCExportMatchesTheReference(file: String) throws {
        let expected = try #require(try Expected.all().first { $0.file == file })
        #expect(expected.tensorFlopsPerInst == NsightComputeImport.tensorFLOPsPerInstruction)
        let kernels = try NsightComputeImport.parse(
            String(contentsOf: Self.nerscFixtures.appendingPathComponent(file), encoding: .utf8), file: file)
        #expect(kernels.map(\.name) == expected.kernelsAggregatedByName.map(\.kernelName))
        let sources: [String: NsightKernel.TimeSource] = [
            "gpu__time_duration.sum": .duration,
            "sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second": .smCycles,
            "smsp__cycles_elapsed.avg / smsp__cycles_elapsed.avg.per_second": .smspCycles,
        ]
        for (kernel, reference) in zip(kernels, expected.kernelsAggregatedByName) {
            #expect(kernel.launchIDs == reference.launchIds)
            let launches = expected.launches.filter { reference.launchIds.contains($0.id) }
            #expect(kernel.timedLaunches == launches.filter { $0.timeSource != nil }.count)
            #expect(kernel.timeSources == Set(launches.compactMap { $0.timeSource.flatMap { sources[$0] } }))
            if let seconds = reference.timeSeconds {
                #expect(abs(kernel.nanoseconds / 1e9 - seconds) <= 1e-9 * seconds, "\(kernel.name)")
            } else {
                #expect(kernel.nanoseconds == 0, "\(kernel.name)")
            }
            #expect(Self.close(kernel.flops, reference.flopsByPrecision.compactMapValues { $0 }), "\(kernel.name)")
            #expect(Self.close(kernel.bytes, reference.bytesByLevel.compactMapValues { $0 }), "\(kernel.name)")
            let flopSources = reference.flopsByPrecision.compactMapValues { $0 }.keys.map {
                ($0, $0 == NsightComputeImport.tensorPrecision ? NsightKernel.FLOPSource.tensorPipe : .sassCounters)
            }
            #expect(kernel.flopSources == Dictionary(uniqueKeysWithValues: flopSources), "\(kernel.name)")
        }
    }

    /// The same keys, and each value within 1e-12 of the reference's (both parse the same
    /// decimal text and sum in the same order).
    private static func close(_ values: [String: Double], _ reference: [String: Double]) -> Bool {
        Set(values.keys) == Set(reference.keys)
            && reference.allSatisfy { key, value in abs(values[key]! - value) <= 1e-12 * max(abs(value), 1) }
    }
}
