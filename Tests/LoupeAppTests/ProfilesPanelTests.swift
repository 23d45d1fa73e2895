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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory.appendingPathComponent("w.sqlite").path)
        let service = ProfileService(workspace: workspace)
        let alexnet = try service.importFiles(["\(Self.kineto)/alexnet-a100"], name: "alexnet")
        let twoRanks = try service.importFiles(["\(Self.kineto)/distributed-2rank"], name: "two ranks")
        return (ProfilesBrowser(workspace: workspace), [alexnet.id, twoRanks.id])
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
}
