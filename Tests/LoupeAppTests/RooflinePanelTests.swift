import Foundation
import LoupeApp
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

@Suite struct RooflinePanelTests {
    static let cpu = RooflineModel.Profile(
        name: "Test CPU, 2 cores", kind: "cpu",
        ceilings: [
            .init(kind: "compute", name: "FP32 (2 cores)", value: 200, precision: "FP32"),
            .init(kind: "memory", name: "L1", value: 300, smallestBytes: 16 << 10, largestBytes: 64 << 10),
            .init(kind: "memory", name: "DRAM", value: 30, smallestBytes: 64 << 20, largestBytes: 1 << 30),
        ],
        points: [
            .init(
                name: "sgemm", suite: "kernels", shape: "512x512x512", seconds: 0.010, flops: ["FP32": 1.7e9],
                bytes: 1.7e9 / 60),
            .init(
                name: "softmax", suite: "kernels", shape: "8x1000", seconds: 0.002, flops: ["FP32": 6e6], bytes: 3e7,
                footprintBytes: 1 << 30),
            .init(
                name: "small-softmax", suite: "kernels", shape: "2x100", seconds: 0.001, flops: ["FP32": 6e6],
                bytes: 3e7,
                footprintBytes: 32 << 10),
        ])
    static let gpu = RooflineModel.Profile(
        name: "H100 SXM5 80GB", kind: "gpu",
        ceilings: [
            .init(kind: "compute", name: "FP64", value: 34_000, precision: "FP64"),
            .init(kind: "compute", name: "FP32", value: 67_000, precision: "FP32"),
            .init(kind: "compute", name: "BF16 tensor", value: 989_400, precision: "BF16"),
            .init(kind: "memory", name: "HBM3", value: 3_350),
        ],
        points: [
            .init(
                name: "dgemm", suite: "ncu:x.csv", shape: "launches 0", seconds: 0.001, flops: ["FP64": 3e10],
                bytes: 1e8),
            .init(
                name: "memcpy_kernel", suite: "ncu:x.csv", shape: "launches 1", seconds: 0.001, flops: [:], bytes: 3e9),
        ])
    static let data = RooflineModel(profiles: [cpu, gpu])

    private func loaded(width: Int = 80, height: Int = 24) -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), Self.data))
        return state
    }

    private func panel(_ state: AppState) -> RooflinePanel { state.panels[state.focusedPanel] as! RooflinePanel }

    /// Two imports of the same GPU's kernels: `b` on one makes it the baseline, and the other's
    /// kernels show their speedup over it, in the table and as ○ on the chart.
    @Test func aBaselineImportShowsEachKernelsSpeedup() throws {
        let profile = RooflineModel.Profile(
            name: "A100 40GB", kind: "gpu",
            ceilings: [
                .init(kind: "compute", name: "FP32", value: 19_500, precision: "FP32"),
                .init(kind: "memory", name: "HBM2", value: 1_555),
            ],
            points: [
                .init(
                    name: "sgemm", suite: "ncu:before.csv", shape: "launches 0", seconds: 0.002, flops: ["FP32": 2e9],
                    bytes: 1e8, bytesByLevel: ["L1": 4e9, "L2": 1e9, "DRAM": 1e8]),
                .init(
                    name: "sgemm", suite: "ncu:after.csv", shape: "launches 0", seconds: 0.001, flops: ["FP32": 2e9],
                    bytes: 1e8, bytesByLevel: ["L1": 4e9, "L2": 1e9, "DRAM": 1e8]),
            ])
        // A kernel of another shape is not compared (256 against 1024 is not a speedup); Nsight
        // Compute launches of the same kernel are.
        let cpu = RooflineModel(profiles: [
            RooflineModel.Profile(
                name: "cpu", kind: "cpu", ceilings: [],
                points: [
                    .init(name: "sgemm", suite: "a", shape: "256", seconds: 1, flops: [:], bytes: 1),
                    .init(name: "sgemm", suite: "b", shape: "1024", seconds: 1, flops: [:], bytes: 1),
                ])
        ])
        #expect(cpu.baseline(for: cpu.profiles[0].points[1], suite: "a") == nil)
        #expect(
            RooflineModel(profiles: [profile]).baseline(for: profile.points[1], suite: "ncu:before.csv")
                == profile.points[0])
        // Every level with bytes, nearest the cores first; DRAM judged against the HBM2 roof.
        let levels = profile.levelPlacements(profile.points[1], precision: "FP32")
        #expect(levels.map(\.level) == ["L1", "L2", "HBM2"])
        #expect(levels.map(\.flopsPerByte) == [0.5, 2, 20])
        #expect(levels[0].fraction == nil && levels[2].fraction == 2000 / min(19_500, 1_555 * 20))
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [profile])))
        // Sorted by time, slowest first: the "before" run is selected.
        AppFixtures.press([.character("b")], on: &state)
        #expect(panel(state).baselineSuite == "ncu:before.csv")
        let text = state.render().text()
        #expect(text.contains("baseline: ncu:before.csv (1 kernels); 1 runs of them elsewhere show the change"))
        #expect(text.contains("vs base") && text.contains("base") && text.contains("2.00×"))
        #expect(text.contains("before.csv · launch #0") && text.contains("○ baseline ncu:before.csv"))
        #expect(text.contains("L1 0.500 F/B, L2 2.00 F/B, HBM2 20.0 F/B 5.1%"), "\(text)")
        AppFixtures.press([.character("b")], on: &state)
        #expect(panel(state).baselineSuite == nil && !state.render().text().contains("vs base"))
    }

    @Test func selectionMovesAndReloadAsksForData() {
        var state = loaded()
        AppFixtures.press([.character("j")], on: &state)
        #expect(panel(state).list.selected == 1)
        #expect(AppFixtures.press([.character("r")], on: &state) == [.ask(RooflinePanel.LoadRoofline())])
    }

    @Test func tableJudgesKernelsAgainstTheLevelTheyLiveIn() {
        let text = loaded(width: 160, height: 48).render().text()
        #expect(text.contains("sgemm"))
        #expect(text.contains("85%"))  // 170 of min(200, 30 × 60) (no footprint: the slowest level)
        #expect(text.contains("compute"))
        #expect(text.contains("50%"))  // softmax in DRAM: 3 of 30 × 0.2 = 6
        #expect(text.contains("10%"))  // small-softmax in L1: 6 of 300 × 0.2 = 60
        #expect(text.contains("memory"))
        #expect(text.contains("FP32 (2 cores) 200 GFLOP/s"))
    }

    /// A kernel above the compute peak (the peak measured with an older loop, or in a slower phase
    /// of the machine) is told to measure the roofs again, not that it reuses a faster level.
    @Test func aKernelAboveThePeakSaysTheRoofsAreOlderThanItsRun() {
        let stale = RooflineModel.Profile(
            name: "Test CPU, 2 cores", kind: "cpu",
            ceilings: [
                .init(kind: "compute", name: "FP32 (2 cores)", value: 100, precision: "FP32"),
                .init(kind: "memory", name: "DRAM", value: 30, smallestBytes: 64 << 20, largestBytes: 1 << 30),
            ],
            points: [
                .init(
                    name: "sgemm", suite: "kernels", shape: "1024x1024x1024", seconds: 0.010, flops: ["FP32": 1.5e9],
                    bytes: 1.5e9 / 200)
            ])
        var state = AppFixtures.state(width: 160, height: 48)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [stale])))
        let text = state.render().text()
        #expect(text.contains("150% ⚠ compute"))
        #expect(text.contains("150% ⚠ above the peak: measured slower than this run, roofline measure again"))
        #expect(!text.contains("reuses data from a faster level"))
    }

    /// A kernel a little above its memory roof is not capped at 100% nor passed off as at its
    /// roof: the table shows its real figure marked, and its line under the table says what to check.
    @Test(arguments: [(120, 36), (80, 24)])
    func aKernelAboveItsRoofShowsItsRealFigureMarked(width: Int, height: Int) {
        // 3.06 GFLOP/s at 0.1 FLOP/byte under a 30 GB/s DRAM roof: 3.06 of 3, 102%.
        let over = RooflineModel.Profile(
            name: "Test CPU, 2 cores", kind: "cpu",
            ceilings: [
                .init(kind: "compute", name: "FP32 (2 cores)", value: 200, precision: "FP32"),
                .init(kind: "memory", name: "DRAM", value: 30, smallestBytes: 64 << 20, largestBytes: 1 << 30),
            ],
            points: [
                .init(
                    name: "axpy", suite: "kernels", shape: "16M", seconds: 0.01, flops: ["FP32": 3.06e7], bytes: 3.06e8,
                    footprintBytes: 1 << 30)
            ])
        #expect(abs(over.placements("FP32")[0].fraction! - 1.02) < 1e-9)
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [over])))
        let lines = state.render().text().split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("│▌axpy ") && $0.contains("102% ⚠ memory") }, "\(lines)")
        #expect(lines.contains { $0.contains("axpy: judged at DRAM (kernels) · 102% ⚠ above the DRAM roof") })
        #expect(!lines.contains { $0.contains("100%") })
    }

    /// The sample A100 export's kernels ran 7,488 and 4,224 ns: they read in µs, their rates in
    /// GFLOP/s and MFLOP/s (hand-computed in RooflineFormatTests), never "0.00" ms or "0.0" GFLOP/s.
    @Test(arguments: [(120, 36), (80, 24)])
    func microsecondKernelsReadInMicrosecondsAndMegaflops(width: Int, height: Int) throws {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), try Self.a100()))
        let lines = state.render().text().split(separator: "\n").map(String.init)
        let sgemm = try #require(lines.first { $0.contains("│▌ampere_sgemm_32x32") }, "\(lines)")
        let reduce = try #require(lines.first { $0.contains("│ void splitKreduce_kernel") }, "\(lines)")
        #expect(
            sgemm.contains(" 7.49 µs ") && sgemm.contains(" 19.4 GFLOP/s ") && sgemm.contains(" 0.10% "), "\(sgemm)")
        #expect(reduce.contains(" 4.22 µs ") && reduce.contains(" 3.79 MFLOP/s ") && reduce.contains(" <0.01% "))
        #expect(!lines.contains { $0.contains(" 0.00 ") || $0.contains(" 0.0 ") || $0.contains(" 0% ") })
        if width >= 120 {
            #expect(
                sgemm.contains(" 19.5 TFLOP/s ") && reduce.contains(" 97.2 GFLOP/s ") && reduce.contains(" 0.0625 "))
        }
    }

    /// A line cut by the panel's edge ends in "…": the selected kernel's line names its suite and
    /// every level, more than 80 columns hold.
    @Test func cutLinesEndInAnEllipsis() throws {
        var state = AppFixtures.state(width: 80, height: 24)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), try Self.a100()))
        let lines = state.render().text().split(separator: "\n").map(String.init)
        let judged = try #require(lines.first { $0.contains("ampere_sgemm_32x32_sliced1x4_tn: judged at HBM2") })
        #expect(judged.hasSuffix("…│"), "\(judged)")
        // The demo CPU's roofs that find no place beside their lines are named under the chart,
        // each whole, before the axes' units, which wrap to the next row.
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [Self.demoCPU])))
        let text = state.render().text().split(separator: "\n")
        let row = try #require(text.firstIndex { $0.contains("◆ matmul-naive") })
        #expect(text[row].contains("L1 152 GB/s · L2 25.8 GB/s · DRAM 18.5 GB/s"), "\(text[row])")
        #expect(text[row + 1].contains("◇ ridge"), "\(text[row + 1])")
    }

    /// A long device name (ncu's "NVIDIA H100 80GB HBM3 (ncu FILE)") gives way in the title at
    /// 80 columns: the precision and which profile of how many stay.
    @Test func aLongDeviceNameGivesWayToPrecisionAndIndex() {
        var gpu = Self.gpu
        gpu.name = "NVIDIA H100 80GB HBM3 (ncu h100-sgemm-raw.csv, h100-elementwise.csv)"
        var state = AppFixtures.state(width: 80, height: 24)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [Self.cpu, gpu])))
        AppFixtures.press([.character("p")], on: &state)
        let top = state.render().text().split(separator: "\n").first { $0.hasPrefix("╭ Roofline") } ?? ""
        #expect(top.contains("NVIDIA H100") && top.contains("… · FP64 · 2/2 ─╮"), "\(top)")
    }

    @Test func sortingReordersTheTable() {
        var state = loaded(width: 160, height: 48)
        // By time, longest first.
        #expect(panel(state).rows.map(\.point.name) == ["sgemm", "softmax", "small-softmax"])
        AppFixtures.press([.character("s")], on: &state)  // GFLOP/s, highest first
        #expect(panel(state).rows.map(\.point.name) == ["sgemm", "small-softmax", "softmax"])
        AppFixtures.press([.character("S")], on: &state)
        #expect(panel(state).rows.map(\.point.name) == ["softmax", "small-softmax", "sgemm"])
    }

    @Test func profilesAndPrecisionsSwitchAndKernelsWithoutFlopsAreListed() {
        var state = loaded(width: 160, height: 48)
        AppFixtures.press([.character("p")], on: &state)
        #expect(panel(state).profile?.name == "H100 SXM5 80GB")
        #expect(panel(state).precision == "FP64")  // the kernels' precision comes first
        var text = state.render().text()
        #expect(text.contains("H100 SXM5 80GB · FP64 · 2/2"))
        #expect(text.contains("memcpy_kernel"))
        #expect(text.contains("no FP64"))
        #expect(text.contains("BF16 tensor"))
        AppFixtures.press([.character("f")], on: &state)
        #expect(panel(state).precision == "FP32")
        text = state.render().text()
        #expect(text.contains("· FP32 ·"))
        AppFixtures.press([.character("p")], on: &state)
        #expect(panel(state).profile?.name == "Test CPU, 2 cores")
    }

    /// A CPU profile with an int8 roof: the dynamic int8 kernel is judged against it in GOP/s
    /// (81% of it), not against the FP32 roof it would be over four times; in the FP32 view it is
    /// listed without a place and the int8 roof is drawn dim, in its own unit.
    @Test func anInt8KernelIsJudgedAgainstTheInt8Roof() {
        let profile = RooflineModel.Profile(
            name: "Test CPU, 2 cores", kind: "cpu",
            ceilings: [
                .init(kind: "compute", name: "FP32 (2 cores)", value: 228, precision: "FP32"),
                .init(kind: "compute", name: "INT8 (2 cores)", value: 935, precision: "INT8"),
                .init(kind: "memory", name: "L3", value: 171, smallestBytes: 4 << 20, largestBytes: 32 << 20),
            ],
            points: [
                .init(
                    name: "sgemm-openblas", suite: "kernels", shape: "1024x1024x1024", seconds: 0.01063,
                    flops: ["FP32": 2.147e9], bytes: 1.26e7, footprintBytes: 12 << 20),
                .init(
                    name: "matmul-int8-dynamic", suite: "kernels", shape: "1024x1024x1024", seconds: 0.00284,
                    flops: ["INT8": 2.147e9], bytes: 1.15e7, footprintBytes: 12 << 20),
            ])
        #expect(profile.precisions == ["FP32", "INT8"])
        let int8 = profile.placements("INT8")
        #expect(int8[0].gflopsPerSecond == nil)
        #expect(abs(int8[1].fraction! - 2.147e9 / 0.00284 / 1e9 / 935) < 1e-9 && int8[1].bound == "compute")
        var state = AppFixtures.state(width: 160, height: 48)
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [profile])))
        var text = state.render().text()
        #expect(text.contains("INT8 (2 cores) 935 GOP/s") && text.contains("no FP32"))
        AppFixtures.press([.character("f")], on: &state)
        #expect(panel(state).precision == "INT8")
        text = state.render().text()
        #expect(text.contains("↑ INT8 GOP/s") && text.contains("FP32 (2 cores) 228 GFLOP/s"))
        #expect(text.contains("81% compute") && text.contains("no INT8"))
    }

    @Test func exportWritesTheCSV() throws {
        var state = loaded()
        let effects = AppFixtures.press([.character("e")], on: &state)
        guard case .writeFile(let path, let contents)? = effects.first else {
            Issue.record("expected a file write, got \(effects)")
            return
        }
        #expect(path.hasSuffix("/roofline-test-cpu-2-cores-fp32.csv"))
        let lines = contents.split(separator: "\n")
        #expect(lines.first?.hasPrefix("type,name,shape,suite,precision,level") == true)
        #expect(lines.count == 1 + 3 + 3)
        #expect(lines.contains { $0.hasPrefix("ceiling,DRAM,") && $0.contains(",30,GB/s,") })
        #expect(lines.contains { $0.hasPrefix("kernel,softmax,8x1000,kernels,FP32,DRAM,0.002,3,0.2,6,0.5,memory") })
    }

    @Test func withoutAProfileItSaysHowToMeasure() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [])))
        #expect(state.render().text().contains("loupe roofline measure"))
    }

    @Test func aWorkspaceThatCannotBeReadIsSaidSoInsteadOfAnEmptyChart() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("4")], on: &state)
        _ = state.update(AppFixtures.failure(RooflinePanel.LoadRoofline(), "w.sqlite: no such table: kernel_runs"))
        let text = state.render().text()
        #expect(text.contains("✗ The roofs could not be read: w.sqlite: no such table: kernel_runs"))
        #expect(!text.contains("No machine profile"))
        // r tries again, and a good answer replaces the error.
        #expect(AppFixtures.press([.character("r")], on: &state) == [.ask(RooflinePanel.LoadRoofline())])
        _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), Self.data))
        #expect(!state.render().text().contains("could not be read"))
    }

    @Test func aFinishedCommandReloadsTheRoofs() {
        var state = loaded()
        let effects = state.update(.jobFinished(JobID(3), CommandOutcome(output: "measured\n")))
        #expect(effects.contains(.ask(RooflinePanel.LoadRoofline())))
    }

    /// Another process's commit (a teammate's import into a shared workspace) reloads them too.
    @Test func anotherProcesssCommitReloadsTheRoofs() {
        var state = loaded()
        #expect(state.update(.workspaceChanged).contains(.ask(RooflinePanel.LoadRoofline())))
    }

    /// The selected kernel is named on the legend line under the chart, never in a box over the
    /// plot; an Nsight Compute kernel's shape names its launch, not "launches 0".
    @Test(arguments: [(160, 48), (120, 36), (80, 24)])
    func theSelectedKernelIsNamedUnderTheChartAndLaunchesReadAsLaunches(width: Int, height: Int) {
        var state = loaded(width: width, height: height)
        AppFixtures.press([.character("p")], on: &state)
        let lines = state.render().text().split(separator: "\n").map(String.init)
        let selected = panel(state).rows[panel(state).list.selected].point.name
        let legend = lines.filter { $0.contains("◆ \(selected)") }
        #expect(legend.count == 1 && legend.allSatisfy { $0.contains("FLOP/byte →") }, "\(legend)")
        #expect(!lines.contains { $0.contains("launches 0") || $0.contains("launches 1") })
        if width >= 160 {
            #expect(lines.contains { $0.contains("launch #0") } && lines.contains { $0.contains("launch #1") })
        }
        let many = RooflineModel.Point(
            name: "k", suite: "ncu:x.csv", shape: "launches 3,7,9", seconds: 1, flops: [:], bytes: 1)
        #expect(many.shownShape == "3 launches")
        // H100's FP8 tensor roof, 1,979 TFLOP/s, in PFLOP/s rather than %g's "1.98e+03".
        #expect(RooflineFormat.rate(1_979_000, unit: "FLOP/s") == "1.98 PFLOP/s")
        #expect(RooflineFormat.rate(989_400, unit: "FLOP/s") == "989 TFLOP/s")
        #expect(Self.cpu.points[0].shownShape == Self.cpu.points[0].shape)
    }

    @Test func screensAt160x48() {
        expectPanel(loaded(width: 160, height: 48), matchesGolden: "roofline-160x48")
        var gpu = loaded(width: 160, height: 48)
        AppFixtures.press([.character("p")], on: &gpu)
        expectPanel(gpu, matchesGolden: "roofline-gpu-160x48")
    }

    /// Readable at 120×36 and 80×24: every kernel's name whole in the table, the roofs' labels
    /// whole (none drawn over another), and the y axis in one notation.
    @Test(arguments: [(120, 36), (80, 24)])
    func namesAndLabelsStayWholeWhenNarrow(width: Int, height: Int) {
        for profile in 0..<2 {
            var state = loaded(width: width, height: height)
            for _ in 0..<profile { AppFixtures.press([.character("p")], on: &state) }
            let text = state.render().text()
            let kernels = profile == 0 ? ["sgemm", "softmax", "small-softmax"] : ["dgemm", "memcpy_kernel"]
            for name in kernels {
                #expect(text.split(separator: "\n").contains { $0.contains("│ \(name) ") || $0.contains("│▌\(name) ") })
            }
            let labels =
                profile == 0
                ? ["FP32 (2 cores) 200 GFLOP/s", "L1 300 GB/s", "DRAM 30.0 GB/s"]
                : ["FP64 34.0 TFLOP/s", "HBM3 3.35 TB/s"]
            for label in labels {
                // At 80 columns "FP32 (2 cores)" keeps its roof's row as "FP32".
                let short = label.replacingOccurrences(of: " (2 cores)", with: "")
                #expect(text.contains(label) || text.contains(short), "\(label) at \(width)x\(height)")
            }
            #expect(!text.contains("1e4") && !text.contains("10000"))
        }
        #expect(
            RooflinePanel.decade(4) == "10k" && RooflinePanel.decade(6) == "1M" && RooflinePanel.decade(-3) == "1e-3")
    }
    /// A GPU's datasheet roofs (seven on an H100: FP64, FP64 tensor, FP32, TF32, BF16 and FP8
    /// tensor, HBM3) are each readable at 80×24: on the chart or whole in the legend under it,
    /// which wraps rather than cut "FP64 tensor 67.0 TFLOP/s" at the edge.
    @Test(arguments: [(120, 36), (80, 24)])
    func everyDatasheetRoofIsReadable(width: Int, height: Int) throws {
        for gpu in ["h100", "a100"] {
            let datasheet = try #require(GPUDatasheet.matching(gpu))
            let profile = RooflineModel.Profile(
                name: datasheet.name, kind: "gpu",
                ceilings: datasheet.compute.map {
                    .init(kind: "compute", name: $0.name, value: $0.gflops, precision: $0.precision)
                } + [.init(kind: "memory", name: datasheet.memoryName, value: datasheet.memoryGigabytesPerSecond)],
                points: [
                    // The demo's H100 sgemm (ncu:h100-sgemm-raw.csv): 620 µs at 341 FLOP/byte.
                    .init(
                        name: "ampere_sgemm_128x64_tn", suite: "ncu:x.csv", shape: "launches 0", seconds: 620e-6,
                        flops: ["FP32": 3.43e10], bytes: 3.43e10 / 341)
                ])
            var state = AppFixtures.state(width: width, height: height)
            AppFixtures.press([.character("4")], on: &state)
            _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), RooflineModel(profiles: [profile])))
            let text = state.render().text()
            let context = "\(datasheet.name) at \(width)x\(height)\n\(text)"
            for roof in profile.ceilings {
                let unit = roof.kind == "memory" ? "B/s" : RooflineFormat.operations(roof.precision ?? "FP32")
                #expect(text.contains(roof.name + " " + RooflineFormat.rate(roof.value, unit: unit)), "\(context)")
            }
            let chart = try ChartReading(state.render())
            let legend = text.split(separator: "\n", omittingEmptySubsequences: false)[(chart.axis + 1)...]
                .prefix { !$0.contains("kernel") }
            #expect(!legend.isEmpty && legend.allSatisfy { !$0.contains("…") }, "a legend cut, \(context)")
        }
    }

    /// The A100 profile `loupe roofline import-ncu a100-sgemm-splitk-details.csv --gpu a100`
    /// stores: the real Ampere export in sample-data (no peak_sustained metrics) under the A100
    /// 40GB datasheet's roofs, read back through the Roofline port.
    static func a100() throws -> RooflineModel {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/ncu/a100-sgemm-splitk-details.csv").standardized.path
        let file = (path as NSString).lastPathComponent
        let kernels = try NsightComputeImport.parse(String(contentsOfFile: path, encoding: .utf8), file: file)
        let datasheet = try #require(GPUDatasheet.matching("a100"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-roofline-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory + "/w.sqlite")
        let ceilings =
            datasheet.compute.map {
                CeilingRecord(
                    kind: "compute", name: $0.name, value: $0.gflops, provenance: datasheet.source,
                    precision: $0.precision)
            }
            + [
                CeilingRecord(
                    kind: "memory", name: datasheet.memoryName, value: datasheet.memoryGigabytesPerSecond,
                    provenance: datasheet.source)
            ]
        let profileID = try workspace.roofline.record(
            MachineProfileRecord(machine: datasheet.name, cores: 0, sweepJSON: "[]", kind: "gpu"), ceilings: ceilings)
        _ = try workspace.roofline.record(
            kernels.map { kernel in
                KernelRun(
                    suite: "ncu:\(file)", kernel: kernel.name,
                    workload: "launches \(kernel.launchIDs.joined(separator: ","))", calls: kernel.launchIDs.count,
                    nanoseconds: Int64(kernel.nanoseconds.rounded()), flops: kernel.flops.values.reduce(0, +),
                    bytes: kernel.bytes["DRAM"] ?? 0, threads: 1, machine: datasheet.name, profileID: profileID,
                    flopsByPrecision: kernel.flops, bytesByLevel: kernel.bytes.isEmpty ? nil : kernel.bytes)
            })
        return try RooflineBrowser(workspace: workspace).model()
    }

    /// This machine's roofs as `roofline measure` found them (notebooks/roofline.md): four memory
    /// levels within a decade of each other, an INT8 roof above the FP32 one, and kernels under them.
    static let measuredCPU = RooflineModel.Profile(
        name: "AMD EPYC, 2 cores", kind: "cpu",
        ceilings: [
            .init(kind: "compute", name: "FP32 (2 cores)", value: 528, precision: "FP32"),
            .init(kind: "compute", name: "INT8 (2 cores)", value: 2_080, precision: "INT8"),
            .init(kind: "memory", name: "L1", value: 368.8, smallestBytes: 32 << 10, largestBytes: 64 << 10),
            .init(kind: "memory", name: "L2", value: 220.4, smallestBytes: 128 << 10, largestBytes: 1 << 20),
            .init(kind: "memory", name: "L3", value: 177.9, smallestBytes: 2 << 20, largestBytes: 16 << 20),
            .init(kind: "memory", name: "DRAM", value: 40, smallestBytes: 128 << 20, largestBytes: 256 << 20),
        ],
        points: [
            .init(
                name: "sgemm-openblas", suite: "kernels", shape: "2048x2048x2048", seconds: 0.0372,
                flops: ["FP32": 1.718e10], bytes: 5.03e7, footprintBytes: 48 << 20),
            .init(
                name: "softmax", suite: "kernels", shape: "64x4096", seconds: 0.00021, flops: ["FP32": 1.31e6],
                bytes: 2.1e6, footprintBytes: 1 << 20),
            .init(
                name: "layernorm", suite: "kernels", shape: "512x384", seconds: 0.00018, flops: ["FP32": 1.57e6],
                bytes: 1.6e6, footprintBytes: 768 << 10),
            .init(
                name: "gelu", suite: "kernels", shape: "512x1536", seconds: 0.0011, flops: ["FP32": 6.3e6],
                bytes: 6.3e6, footprintBytes: 3 << 20),
            .init(
                name: "axpy", suite: "kernels", shape: "16M", seconds: 0.0098, flops: ["FP32": 3.4e7],
                bytes: 2.0e8, footprintBytes: 192 << 20),
        ])

    /// The demo workspace's CPU profile (`loupe roofline show` on .demo/demo.sqlite): L2 and DRAM
    /// within a factor 1.4, L1 six times faster, so at 80×24 the three diagonals touch, and
    /// kernels from microseconds to seconds, some above their roofs.
    static let demoCPU: RooflineModel.Profile = {
        let l2 = 32 << 20
        let dram = 256 << 20
        // name, shape, seconds, GFLOP/s, FLOP/byte, footprint: as `roofline show` printed them.
        let kernels: [(String, String, Double, Double, Double, Int)] = [
            ("sgemm-openblas", "2048x2048x2048", 0.113361, 151.5, 341.33, l2),
            ("sgemm-openblas", "1024x1024x1024", 0.011440, 187.7, 170.67, l2),
            ("matmul-naive", "1024x1024x1024", 2.807052, 0.765, 170.67, l2),
            ("matmul-int8", "1024x1024x1024", 0.008211, 261.5, 227.46, l2),
            ("softmax-three-pass", "8x262144", 0.001434, 35.1, 1.20, l2),
            ("softmax-three-pass", "4x33554432", 0.145792, 22.1, 1.20, dram),
            ("layernorm", "384x4096", 0.000333, 33.1, 0.87, l2),
            ("gelu", "67108864", 0.029059, 57.7, 3.12, dram),
            ("attention-naive", "2048x64", 0.276604, 8.5, 9.86, l2),
            ("attention-flash", "2048x64", 0.011909, 197.9, 25.55, l2),
            ("embedding lookup", "23 tokens", 0.000030, 0.6, 0.12, dram),
            ("layer norm", "23 tokens", 0.000006, 10.7, 0.84, dram),
        ]
        return RooflineModel.Profile(
            name: "Intel(R) Xeon(R) Processor, 2 cores", kind: "cpu",
            ceilings: [
                .init(kind: "compute", name: "FP32 (2 cores)", value: 260.1, precision: "FP32"),
                .init(kind: "compute", name: "INT8 (2 cores)", value: 5_832.1, precision: "INT8"),
                .init(kind: "memory", name: "L1", value: 151.7, smallestBytes: 16 << 10, largestBytes: 2 << 20),
                .init(kind: "memory", name: "L2", value: 25.8, smallestBytes: 8 << 20, largestBytes: 64 << 20),
                .init(kind: "memory", name: "DRAM", value: 18.5, smallestBytes: 128 << 20, largestBytes: 1 << 30),
            ],
            points: kernels.map { name, shape, seconds, rate, intensity, footprint in
                let flops = rate * 1e9 * seconds
                return .init(
                    name: name, suite: "kernels", shape: shape, seconds: seconds, flops: ["FP32": flops],
                    bytes: flops / intensity, footprintBytes: footprint)
            })
    }()

    /// Roof labels sit on their own lines, in the order of the lines, never over a kernel nor
    /// against another roof's line (L2's label beside the L1 diagonal at 80×24); the axes give
    /// every decade the same number of rows and columns. Read back from the rendered frame: the
    /// axes' decade ticks say where each roof and kernel must be.
    @Test(arguments: [(120, 36), (80, 24)])
    func roofLabelsSitOnTheirLinesInTheirOrder(width: Int, height: Int) throws {
        let a100 = try Self.a100()
        let gpu = try #require(a100.profiles.first)
        #expect(gpu.name == "A100 40GB" && gpu.points.count == 2)
        for model in [a100, RooflineModel(profiles: [Self.measuredCPU]), RooflineModel(profiles: [Self.demoCPU])] {
            let profile = model.profiles[0]
            var state = AppFixtures.state(width: width, height: height)
            AppFixtures.press([.character("4")], on: &state)
            _ = state.update(AppFixtures.answer(RooflinePanel.LoadRoofline(), model))
            let chart = try ChartReading(state.render())
            let context = "\(profile.name) at \(width)x\(height)"
            // Compute roofs: each label on the row of its roof, the faster roofs' higher up (a row
            // shared by two roofs is read left to right, fastest first).
            let peak = try #require(profile.peak("FP32"))
            let roofs = profile.computeCeilings.filter { $0.value != peak.value || $0 == peak }
                .sorted { $0.value > $1.value }
            var previous: Point?
            for roof in roofs {
                let text =
                    roof.name + " "
                    + RooflineFormat.rate(roof.value, unit: RooflineFormat.operations(roof.precision ?? "FP32"))
                // In full, or with the name's parenthesis left out where the full one has no room.
                let short = text.replacingOccurrences(of: #" \(.*\)"#, with: "", options: .regularExpression)
                let found = chart.find(text) ?? chart.find(short)
                let at = try #require(found, "\(text) shown, \(context)")
                // On its roof's row; or, where kernels and lines leave no room there, over its right
                // end on the row just above or below, which no other roof is drawn on.
                let row = chart.row(roof.value)
                #expect(
                    at.y == row
                        || (abs(at.y - row) == 1 && !profile.computeCeilings.contains { chart.row($0.value) == at.y }),
                    "\(text) on its roof's row, \(context)\n\(chart.frame.text())")
                if let previous {
                    #expect(
                        previous.y < at.y || (previous.y == at.y && previous.x < at.x),
                        "\(text) below the faster roofs, \(context)")
                }
                previous = at
            }
            // Memory roofs: each label beside its own diagonal, on a row that diagonal crosses,
            // the faster levels' higher up; or, with no room beside it, named under the chart.
            var above = -1
            let memory = profile.memoryCeilings.sorted(by: { $0.value > $1.value })
            for roof in memory {
                let text = "\(roof.name) \(RooflineFormat.rate(roof.value, unit: "B/s"))"
                let found = chart.find(text)
                let at = try #require(found, "\(text) shown, \(context)")
                // Under the x axis: in the legend.
                if at.y > chart.axis { continue }
                #expect(at.y > above, "\(text) below the faster levels' labels, \(context)")
                above = at.y
                // One blank cell from the label's end or start, a line cell where this diagonal
                // crosses the row and no other does; no other diagonal under the label.
                let span = chart.columns(ofDiagonal: roof.value, row: at.y)
                let end = at.x + text.count
                let others = memory.filter { $0 != roof }.map { chart.columns(ofDiagonal: $0.value, row: at.y) }
                func ownOnly(_ column: Int) -> Bool {
                    chart.isLine(column: column, row: at.y)
                        && (span.lowerBound - 2...span.upperBound + 2).contains(column)
                        && !others.contains { ($0.lowerBound + 1...$0.upperBound - 1).contains(column) }
                }
                let blank = { (column: Int) in chart.frame[column, at.y].grapheme == " " }
                let detail = "\(text) at columns \(at.x)..<\(end) beside its line at \(span), not \(others)"
                #expect(
                    (blank(end) && ownOnly(end + 1)) || (blank(at.x - 1) && ownOnly(at.x - 2)),
                    "\(detail), \(context)\n\(chart.frame.text())")
                for other in others where other.upperBound - other.lowerBound >= 2 {
                    #expect(
                        (other.lowerBound + 1...other.upperBound - 1).allSatisfy { !(at.x..<end).contains($0) },
                        "\(text) at \(at.x)..<\(end) over another level's line at \(other), \(context)")
                }
            }
            // The selected kernel at its other memory levels: each level's mark where the axes put it.
            let selected = try #require(profile.placements("FP32").max { $0.point.seconds < $1.point.seconds })
            for level in profile.levelPlacements(selected.point, precision: "FP32") where level.level != selected.level
            {
                let cell = chart.cell(level.flopsPerByte, level.gflopsPerSecond)
                #expect(
                    chart.frame[cell.x, cell.y].grapheme == RooflinePanel.levelMark(level.level),
                    "\(level.level) mark at \(cell), \(context)")
            }
            // Every kernel's mark is where the axes put it, not under a label.
            for placement in profile.placements("FP32") {
                guard let intensity = placement.flopsPerByte, let rate = placement.gflopsPerSecond else { continue }
                let cell = chart.cell(intensity, rate)
                #expect(
                    ["●", "◆"].contains(chart.frame[cell.x, cell.y].grapheme),
                    "\(placement.point.name) at \(cell), \(context)")
            }
        }
    }
}

/// A roofline chart read back from a rendered frame: its decade ticks (y down the left, x
/// along the bottom) give the rows and columns of any value, as a reader of the chart would.
private struct ChartReading {
    let frame: Frame
    /// The x axis's row; the legend is the row under it.
    let axis: Int
    /// The first y tick's row and exponent, and rows per decade (below 1 when ticks skip decades).
    let yTick: (row: Int, exponent: Int)
    let rowsPerDecade: Double
    let xTick: (column: Int, exponent: Int)
    let columnsPerDecade: Int

    init(_ frame: Frame) throws {
        self.frame = frame
        let labels = Dictionary(uniqueKeysWithValues: (-6...15).map { (RooflinePanel.decade($0), $0) })
        // The x axis: the row of decades alone, under the plot.
        let rows = frame.text().split(separator: "\n", omittingEmptySubsequences: false)
        let found = rows.indices.first { row in
            let words = rows[row].dropFirst(7).split(separator: " ").filter { $0 != "│" }
            return words.count >= 3 && words.allSatisfy { labels[String($0)] != nil }
        }
        let axis = try #require(found, "an x axis in \(frame.text())")
        self.axis = axis
        // The y ticks: right-aligned in the six columns after the panel's border.
        var yTicks: [(row: Int, exponent: Int)] = []
        for row in 0..<axis {
            let text = (1..<7).map { frame[$0, row].grapheme }.joined().trimmingCharacters(in: .whitespaces)
            if let exponent = labels[text] { yTicks.append((row, exponent)) }
        }
        try #require(yTicks.count >= 3, "y ticks in \(frame.text())")
        let rowGaps = Set(zip(yTicks, yTicks.dropFirst()).map { $1.row - $0.row })
        let decadeGaps = Set(zip(yTicks, yTicks.dropFirst()).map { $0.exponent - $1.exponent })
        #expect(rowGaps.count == 1 && decadeGaps.count == 1, "evenly spaced decades: \(yTicks)")
        yTick = yTicks[0]
        rowsPerDecade = Double(rowGaps.first!) / Double(decadeGaps.first!)
        // The x ticks: the words on the axis row, each starting at its decade's column.
        var xTicks: [(column: Int, exponent: Int)] = []
        var column = 7
        while column < frame.width {
            guard frame[column, axis].grapheme != " " else {
                column += 1
                continue
            }
            var word = ""
            let start = column
            while column < frame.width, frame[column, axis].grapheme != " ", frame[column, axis].grapheme != "│" {
                word += frame[column, axis].grapheme
                column += 1
            }
            if let exponent = labels[word] { xTicks.append((start, exponent)) }
            column += 1
        }
        try #require(xTicks.count >= 3, "x ticks in \(frame.text())")
        let columnGaps = Set(zip(xTicks, xTicks.dropFirst()).map { $1.column - $0.column })
        #expect(columnGaps.count == 1, "evenly spaced decades: \(xTicks)")
        xTick = xTicks[0]
        columnsPerDecade = columnGaps.first!
    }

    /// The row of a rate (GFLOP/s), where its roof is drawn.
    func row(_ rate: Double) -> Int {
        let dots = ((Double(yTick.exponent) - log10(rate)) * rowsPerDecade * 4).rounded()
        return yTick.row + Int(floor(dots / 4))
    }

    /// The cell of a kernel.
    func cell(_ intensity: Double, _ rate: Double) -> Point {
        let dots = ((log10(intensity) - Double(xTick.exponent)) * Double(columnsPerDecade * 2)).rounded()
        return Point(x: xTick.column + Int(floor(dots / 2)), y: row(rate))
    }

    /// The columns a memory roof's diagonal (rate = bandwidth × intensity) crosses on `row`.
    func columns(ofDiagonal gigabytesPerSecond: Double, row: Int) -> ClosedRange<Int> {
        // The rates at the row's top and bottom edges.
        let top = Double(yTick.exponent) - Double(row - yTick.row) / rowsPerDecade
        let bottom = top - 1 / rowsPerDecade
        func column(_ logRate: Double) -> Int {
            let intensity = logRate - log10(gigabytesPerSecond)
            return xTick.column + Int(floor((intensity - Double(xTick.exponent)) * Double(columnsPerDecade)))
        }
        return column(bottom)...column(top)
    }

    /// True when the cell holds braille dots (part of a line).
    func isLine(column: Int, row: Int) -> Bool {
        guard column >= 0, column < frame.width, let scalar = frame[column, row].grapheme.unicodeScalars.first else {
            return false
        }
        return (0x2801...0x28FF).contains(scalar.value)
    }

    /// Where `text` starts, if it is on the screen.
    func find(_ text: String) -> Point? { frame.find(text) }
}
