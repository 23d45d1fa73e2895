import Foundation
import LoupeApp
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The Profiles panel on real traces (HTA's test traces) imported into a real workspace.
@Suite struct ProfilesPanelTests {
    static let kineto = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../LoupeProfilingTests/Fixtures/kineto").standardized.path

    /// A workspace with AlexNet's trace and the 2-rank NCCL trace imported, and its port.
    private func browser() throws -> (ProfilesBrowser, [Int64]) {
        let (workspace, ids) = try imported()
        return (ProfilesBrowser(workspace: workspace), ids)
    }

    /// The workspace ``browser()`` reads, and the two profiles' ids.
    private func imported() throws -> (Workspace, [Int64]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory.appendingPathComponent("w.sqlite").path)
        let service = ProfileService(workspace: workspace)
        let alexnet = try service.importFiles(["\(Self.kineto)/alexnet-a100"], name: "alexnet")
        let twoRanks = try service.importFiles(["\(Self.kineto)/distributed-2rank"], name: "two ranks")
        return (workspace, [alexnet.id, twoRanks.id])
    }

    private func panel(_ state: AppState) -> ProfilesPanel { state.panels[state.focusedPanel] as! ProfilesPanel }

    private func opened(width: Int = 120, height: Int = 36) throws -> (AppState, ProfilesBrowser, [Int64]) {
        let (port, ids) = try browser()
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("9")], on: &state)
        _ = state.update(AppFixtures.answer(ProfilesPanel.ListProfiles(), try port.list()))
        // Newest first: the 2-rank profile is on top.
        let effects = AppFixtures.press([.enter], on: &state)
        let asked = AppFixtures.requests(ProfilesPanel.OpenProfile.self, in: effects)
        #expect(asked == [ProfilesPanel.OpenProfile(id: ids[1])])
        AppFixtures.settle(effects, &state, ports: ports(port))
        return (state, port, ids)
    }

    private func ports(_ port: ProfilesBrowser) -> Ports {
        var ports = Ports()
        ports.register(port)
        return ports
    }

    /// Opening asks for the lanes, then for the report as a job; until it comes the breakdown
    /// says it is analysing, and the timeline is already there.
    @Test func theReportComesAsAJobAndTheTimelineDoesNotWaitForIt() throws {
        let (port, ids) = try browser()
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("9")], on: &state)
        _ = state.update(AppFixtures.answer(ProfilesPanel.ListProfiles(), try port.list()))
        let effects = AppFixtures.press([.enter], on: &state)
        let open = try #require(AppFixtures.requests(ProfilesPanel.OpenProfile.self, in: effects).first)
        let next = state.update(AppFixtures.answer(open, try port.open(ids[1])))
        let report = AppFixtures.requests(ProfilesPanel.ProfileReportRequest.self, in: next)
        #expect(report == [ProfilesPanel.ProfileReportRequest(id: ids[1])])
        #expect(next.contains { if case .portJob = $0 { true } else { false } })
        #expect(state.render().text().contains("analysing 9487 events"))
        // The timeline draws from the stored lanes while the report is still out.
        AppFixtures.settle(
            AppFixtures.press([.character("v"), .character("v")], on: &state), &state, ports: ports(port))
        #expect(panel(state).view == .timeline && panel(state).report == nil)
        #expect(state.render().text().contains("r0 stream 7"))
        _ = state.update(AppFixtures.answer(report[0], try port.report(ids[1])))
        #expect(panel(state).report?.ranks.count == 2)
    }

    /// Before a window's events are read, a lane is drawn from its stored bins; once read, from
    /// its events: the same columns are busy either way.
    @Test func theFirstFrameDrawsTheStoredBins() throws {
        let (port, ids) = try browser()
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("9")], on: &state)
        _ = state.update(AppFixtures.answer(ProfilesPanel.ListProfiles(), try port.list()))
        let open = try #require(
            AppFixtures.requests(ProfilesPanel.OpenProfile.self, in: AppFixtures.press([.enter], on: &state)).first)
        _ = state.update(AppFixtures.answer(open, try port.open(ids[1])))
        let effects = AppFixtures.press([.character("v"), .character("v")], on: &state)
        let asked = try #require(AppFixtures.requests(ProfilesPanel.TimelineDetail.self, in: effects).first)
        #expect(panel(state).events(ofLane: 0) == nil)
        func laneRow(_ text: String) -> String {
            String(text.split(separator: "\n").first { $0.contains("r0 stream 7") } ?? "")
        }
        let binned = laneRow(state.render().text())
        _ = state.update(AppFixtures.answer(asked, try port.detail(ids[1], window: asked.window)))
        #expect(panel(state).events(ofLane: 0) != nil)
        let exact = laneRow(state.render().text())
        let busy = { (row: String) in row.map { "▁▂▃▄▅▆▇█".contains($0) } }
        let agree = zip(busy(binned), busy(exact)).filter { $0 == $1 }.count
        #expect(binned.count > 80 && agree >= binned.count - 2, "\(binned)\n\(exact)")
    }

    /// The timeline's lanes read as Perfetto's: "stream 7", and a host thread by its name and
    /// number ("python3.8 4037", Kineto's "thread 4037 (python3.8)"), whole at 120 and 80 columns.
    @Test(arguments: [(120, 36), (80, 24)])
    func laneNamesStayReadable(width: Int, height: Int) throws {
        var (state, port, _) = try opened(width: width, height: height)
        AppFixtures.settle(
            AppFixtures.press([.character("v"), .character("v")], on: &state), &state, ports: ports(port))
        #expect(panel(state).view == .timeline)
        let text = state.render().text()
        for lane in ["r0 stream 7 ", "r0 python3.8 4037 ", "r0 python3.8 23695 ", "r1 python3.8 4045 "] {
            #expect(text.contains("│ " + lane), "\(lane) at \(width)x\(height)\n\(text)")
        }
        // Narrower, the name gives way and the thread's number stays.
        #expect(
            ProfilesPanel.laneLabel(rank: 0, label: "thread 23695 (pt_autograd_0)", columns: 16)
                == "r0 pt_aut… 23695")
        #expect(ProfilesPanel.laneLabel(rank: 1, label: "stream 7 ", columns: 16) == "r1 stream 7")
    }

    /// Enter opens the breakdown: HTA's figures per rank, the families, launch delays.
    @Test func enterOpensTheBreakdownPerRank() throws {
        let (state, _, _) = try opened()
        #expect(panel(state).view == .breakdown)
        let text = state.render().text()
        #expect(text.contains("Profile 2 · two ranks"))
        #expect(text.contains("rank 0 · GPU span 600.058 ms"))
        #expect(text.contains("computation overlapped 11.8% of communication"))
        #expect(text.contains("idle") && text.contains("53.6%  321.378 ms"))
        #expect(text.contains("[breakdown] kernels timeline compare"))
    }

    /// v steps through the views; the kernels table lists count, mean, p50, p99 and family.
    @Test func kernelsAndTimeline() throws {
        var (state, port, _) = try opened()
        let ports = ports(port)
        func press(_ keys: [Key]) { AppFixtures.settle(AppFixtures.press(keys, on: &state), &state, ports: ports) }
        press([.character("v")])
        var text = state.render().text()
        #expect(text.contains("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"))
        #expect(text.contains("communication"))
        press([.character("v")])
        #expect(panel(state).view == .timeline)
        text = state.render().text()
        #expect(text.contains("r0 stream 7") && text.contains("r1 stream 84"))
        // ] selects the lane's first kernel in view and shows it; f fits the view to it.
        press([.character("]")])
        let selected = try #require(panel(state).selected)
        #expect(state.render().text().contains("lasts"))
        // Its launch as its args give it.
        let details = state.render().text()
        #expect(details.contains("grid ") && details.contains("block ") && details.contains("regs"))
        // ] again is the lane's next kernel, [ comes back.
        press([.character("]")])
        let second = try #require(panel(state).selected)
        #expect(ProfilesBrowser.Event.precedes(selected, second))
        press([.character("[")])
        #expect(panel(state).selected == selected)
        press([.character("f")])
        let window = panel(state).window
        #expect(window.lowerBound <= selected.start && window.upperBound >= selected.end)
        // Fitted, the kernel's slice is wide enough to carry its name.
        let shortName = ProfilesPanel.sliceName(selected.name)
        #expect(!shortName.contains("<") && !shortName.contains("("))
        #expect(
            state.render().text().split(separator: "\n").contains {
                $0.contains("r\(panel(state).lanes[panel(state).lane].rank) ")
                    && $0.contains(String(shortName.prefix(12)))
            })
        #expect(window.upperBound - window.lowerBound < 2 * max(1000, selected.duration) + selected.duration + 1)
        // 0 shows the whole window again; - cannot zoom out past it.
        press([.character("0"), .character("-")])
        let whole = panel(state).window
        let analysed = try #require(panel(state).report?.window)
        #expect(whole == analysed.start...analysed.end)
        // Panning right by a quarter of a zoomed window.
        press([.character("+"), .character("+")])
        let zoomed = panel(state).window
        press([.character("l")])
        #expect(panel(state).window.lowerBound > zoomed.lowerBound)
    }

    /// Every view states the one window they share; `a` switches all of them to every step
    /// and back, the timeline spanning the window; the list shows the window's span once known.
    @Test func everyViewStatesTheWindowAndASwitchesThemAll() throws {
        var (state, port, ids) = try opened()
        let ports = ports(port)
        func press(_ keys: [Key]) { AppFixtures.settle(AppFixtures.press(keys, on: &state), &state, ports: ports) }
        let htaDefault = "window: ProfilerSteps 1–1 of 2 (last left out, as HTA) · GPU span 600.827 ms"
        #expect(state.render().text().contains(htaDefault))
        press([.character("v")])
        var text = state.render().text()
        #expect(
            text.contains(htaDefault) && text.contains("% of summed kernel time (overlaps each count): rank 0 "),
            "\(text)")
        press([.character("v")])
        #expect(state.render().text().contains(htaDefault))
        let window = try #require(panel(state).report?.window)
        #expect(panel(state).window == window.start...window.end)
        // a: every step, in the timeline and the other views.
        let effects = AppFixtures.press([.character("a")], on: &state)
        #expect(
            AppFixtures.requests(ProfilesPanel.ProfileReportRequest.self, in: effects)
                == [ProfilesPanel.ProfileReportRequest(id: ids[1], allSteps: true)])
        AppFixtures.settle(effects, &state, ports: ports)
        let every = try #require(panel(state).report?.window)
        #expect(!every.leavesOutLastStep && every.span > window.span)
        #expect(panel(state).window == every.start...every.end)
        text = state.render().text()
        #expect(text.contains("window: ProfilerSteps 1–2 of 2 (all) · GPU span "), "\(text)")
        press([.character("v"), .character("v")])
        #expect(panel(state).view == .breakdown && state.render().text().contains("ProfilerSteps 1–2 of 2 (all)"))
        // a again: HTA's default; the list shows its span, not the recording's.
        press([.character("a"), .escape])
        #expect(panel(state).report?.window == window)
        text = state.render().text()
        #expect(text.contains("window ms") && text.contains("600.827"), "\(text)")
    }

    /// The list shows each profile's window span from the import on, before it is opened.
    @Test func theListShowsEachSpanBeforeTheProfileIsOpened() throws {
        let (port, _) = try browser()
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("9")], on: &state)
        _ = state.update(AppFixtures.answer(ProfilesPanel.ListProfiles(), try port.list()))
        let rows = state.render().text().split(separator: "\n").filter {
            $0.contains("alexnet") || $0.contains("two ranks")
        }
        #expect(rows.count == 2 && rows.allSatisfy { !$0.contains("—") }, "\(rows)")
        #expect(rows.contains { $0.contains("600.827") })
    }

    /// The selected kernel's kind says an NCCL kernel's type and family once, and the breakdown
    /// names the launch delay as HTA defines it (from the call's end).
    @Test func kindsAreSaidOnceAndTheLaunchDelayIsHTAs() throws {
        var (state, port, _) = try opened()
        let ports = ports(port)
        var text = state.render().text()
        #expect(text.contains("launch delay (call end → GPU start, as HTA)"), "\(text)")
        AppFixtures.settle(AppFixtures.press([.character("v")], on: &state), &state, ports: ports)
        let index = try #require(panel(state).kernels.firstIndex { $0.family == "communication" })
        #expect(panel(state).kernels[index].type == "communication")
        for _ in 0..<index { AppFixtures.press([.character("j")], on: &state) }
        text = state.render().text()
        let kind = text.split(separator: "\n").first { $0.contains("launches · min") }
        #expect(
            kind?.contains("communication · ") == true && kind?.contains("communication · communication") == false,
            "\(text)")
    }

    /// At 80 columns the timeline's hints and the window line are cut, and end in "…".
    @Test func linesCutAtEightyColumnsEndInAnEllipsis() throws {
        var (state, port, _) = try opened(width: 80, height: 24)
        let ports = ports(port)
        AppFixtures.settle(AppFixtures.press([.character("v"), .character("v")], on: &state), &state, ports: ports)
        #expect(panel(state).view == .timeline)
        let lines = state.render().text().split(separator: "\n")
        let hints = try #require(lines.first { $0.contains("] selects the lane's next kernel") })
        #expect(hints.hasSuffix("…│"), "\(hints)")
        let window = try #require(lines.first { $0.contains("window: ") })
        #expect(window.hasSuffix("…│") || window.hasSuffix("ms │") || window.hasSuffix(")│"), "\(window)")
    }

    /// At 80 columns a two-rank profile's kernels keep their rank: each row's % is of its own
    /// rank's kernel time, which the header gives per rank. The p99 gives way first.
    @Test func theKernelsViewKeepsTheRankAtEightyColumns() throws {
        var (state, port, _) = try opened(width: 80, height: 24)
        AppFixtures.settle(AppFixtures.press([.character("v")], on: &state), &state, ports: ports(port))
        #expect(panel(state).view == .kernels)
        let lines = state.render().text().split(separator: "\n")
        let header = try #require(lines.first { $0.contains("total ms") })
        #expect(header.contains("rank") && header.contains("%") && !header.contains("p99"), "\(header)")
    }

    /// A profile whose report was not kept (imported by an older Loupe, or kept in a form this
    /// one cannot read) still shows its window in the list: the list asks for the report itself.
    @Test func theListWorksOutAWindowThatWasNotKept() throws {
        let (workspace, ids) = try imported()
        try ProfilerTables(workspace).storeProfilerReport("{}", traceID: ids[1])
        let port = ProfilesBrowser(workspace: workspace)
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("9")], on: &state)
        let effects = state.update(AppFixtures.answer(ProfilesPanel.ListProfiles(), try port.list()))
        #expect(
            AppFixtures.requests(ProfilesPanel.ProfileReportRequest.self, in: effects)
                == [ProfilesPanel.ProfileReportRequest(id: ids[1])])
        AppFixtures.settle(effects, &state, ports: ports(port))
        let row = state.render().text().split(separator: "\n").first { $0.contains("two ranks") }
        #expect(row?.contains("600.827") == true && row?.contains("—") == false, "\(row ?? "")")
        #expect(panel(state).view == .list)
    }

    /// A slice's name: the kernel's own, without namespaces, template or arguments.
    @Test func slicesAreNamedByTheKernelsShortName() {
        #expect(
            ProfilesPanel.sliceName(
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)")
                == "vectorized_elementwise_kernel")
        #expect(ProfilesPanel.sliceName("ampere_sgemm_128x64_tn") == "ampere_sgemm_128x64_tn")
        #expect(ProfilesPanel.sliceName("Memcpy HtoD (Pageable -> Device)") == "Memcpy HtoD")
        let event = ProfilesBrowser.Event(
            start: 1_000, duration: 500, name: "void ns::k<int>()", family: .gemm, kind: .kernel, index: 0)
        // 500 ns of a 1,000 ns view over 20 columns: 10 columns, the name cut to 9 with room after.
        let slices = ProfilesPanel.nameSlices([event], from: 1_000, span: 1_000, columns: 20)
        #expect(slices.count == 1 && slices[0].column == 0 && slices[0].text == "k" && slices[0].family == .gemm)
        #expect(ProfilesPanel.nameSlices([event], from: 1_000, span: 100_000, columns: 20).isEmpty)
    }

    /// Idle time is not drawn in communication's colour.
    @Test func idleHasItsOwnColour() throws {
        let (state, _, _) = try opened()
        let frame = state.render()
        let rows = frame.text().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func barColour(_ label: String) throws -> RGB? {
            let y = try #require(rows.firstIndex { $0.contains(label) && $0.contains("█") }, "\(label)")
            let x = try #require((0..<frame.width).first { frame[$0, y].grapheme == "█" })
            return frame[x, y].style.foreground
        }
        let idle = try barColour("  idle ")
        let communication = try barColour("  communication ")
        #expect(idle != nil && idle != communication)
    }

    /// b marks a baseline on the list; compare on another profile asks for the comparison and
    /// shows kernels that went away.
    @Test func compareAgainstABaseline() throws {
        var (state, port, ids) = try opened()
        AppFixtures.press([.escape, .character("j"), .character("b")], on: &state)
        #expect(panel(state).baselineID == ids[0])
        AppFixtures.press([.character("k"), .enter], on: &state)
        #expect(panel(state).view == .breakdown)
        let effects = AppFixtures.press([.character("v"), .character("v"), .character("v")], on: &state)
        let asked = AppFixtures.requests(ProfilesPanel.CompareProfiles.self, in: effects)
        #expect(asked == [ProfilesPanel.CompareProfiles(before: ids[0], after: ids[1])])
        _ = state.update(AppFixtures.answer(asked[0], try port.compare(before: ids[0], after: ids[1])))
        let text = state.render().text()
        #expect(text.contains("before alexnet"))
        #expect(text.contains("gone"))
        #expect(text.contains("ampere_sgemm_32x32_sliced1x4_tn") || text.contains("new"))
    }

    /// b inside an open profile marks that profile (the walkthrough: it answered "mark a baseline on
    /// the list of profiles (esc)", where Evals' b works where you are); b again clears it.
    @Test func bInsideAnOpenProfileMarksIt() throws {
        var (state, _, _) = try opened()
        let open = try #require(panel(state).opened?.record.id)
        #expect(panel(state).view != .list)
        AppFixtures.press([.character("b")], on: &state)
        #expect(panel(state).baselineID == open)
        #expect(state.message?.text.hasPrefix("baseline: profile \(open)") == true)
        AppFixtures.press([.character("b")], on: &state)
        #expect(panel(state).baselineID == nil)
    }

    /// With no profile yet, the panel says how to import one.
    @Test func emptyWorkspaceSaysHowToImport() {
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("9")], on: &state)
        _ = state.update(AppFixtures.answer(ProfilesPanel.ListProfiles(), ProfilesBrowser.Listing(records: [])))
        #expect(state.render().text().contains(":profile import trace.json.gz"))
    }

    /// Every built-in theme's kernel-family colours, "other" and idle are pairwise at least
    /// ΔE 20 apart in CIELAB (CIE76): GEMM next to sync and normalisation next to copies were
    /// ΔE 23 and 0 in the dark theme, 0 and 0 in the light one.
    @Test(arguments: ["default", "light", "high-contrast"])
    func familyColoursAreApartInEveryTheme(name: String) throws {
        let themes = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../themes").standardized.path
        let theme = try ThemeLoader(searchDirectories: [themes]).load(name)
        let panel = ProfilesPanel()
        var colours = KernelFamily.allCases.map { ("\($0)", panel.familyStyle($0, theme).foreground) }
        colours.append(("idle", panel.idleStyle(theme).foreground))
        for (first, second) in Self.pairs(colours) {
            let a = try #require(first.1, "\(first.0) has no colour in \(name)")
            let b = try #require(second.1, "\(second.0) has no colour in \(name)")
            #expect(Self.deltaE(a, b) >= 20, "\(name): \(first.0) and \(second.0) are ΔE \(Self.deltaE(a, b))")
        }
    }

    private static func pairs<T>(_ items: [T]) -> [(T, T)] {
        items.indices.flatMap { i in items.indices.filter { $0 > i }.map { (items[i], items[$0]) } }
    }

    /// CIE76 ΔE between two sRGB colours (D65).
    static func deltaE(_ a: RGB, _ b: RGB) -> Double {
        func lab(_ c: RGB) -> [Double] {
            let linear = [c.red, c.green, c.blue].map { channel -> Double in
                let v = Double(channel) / 255
                return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
            }
            let (r, g, b) = (linear[0], linear[1], linear[2])
            let xyz = [
                (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
                (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
            ]
            let f = xyz.map { $0 > 0.008856 ? cbrt($0) : 7.787 * $0 + 16 / 116 }
            return [116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])]
        }
        let (p, q) = (lab(a), lab(b))
        return sqrt(zip(p, q).map { ($0 - $1) * ($0 - $1) }.reduce(0, +))
    }

}
