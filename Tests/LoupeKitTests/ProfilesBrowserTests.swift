import Foundation
import GRDB
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore
import Testing

/// The Profiles panel's port on HTA's real test traces: lanes stored at import, windows of events
/// read back exactly, a lane stepped through, the report kept.
@Suite struct ProfilesBrowserTests {
    static let kineto = "Tests/LoupeProfilingTests/Fixtures/kineto"

    private func imported(_ set: String) throws -> (Workspace, ProfilesBrowser, Int64) {
        let workspace = try KitFixtures.workspace("browser")
        let report = try ProfileService(workspace: workspace).importFiles([KitFixtures.path("\(Self.kineto)/\(set)")])
        return (workspace, ProfilesBrowser(workspace: workspace), report.id)
    }

    /// Every drawn event of a lane, from all of the profile's events.
    private func truth(_ workspace: Workspace, _ id: Int64) throws -> (ProfileService.Loaded, [String: [ProfileEvent]])
    {
        let service = ProfileService(workspace: workspace)
        let loaded = try service.load(try #require(try workspace.profiles.profilerTrace(id: id)))
        var lanes: [String: [ProfileEvent]] = [:]
        for rank in loaded.ranks {
            for event in rank.events where TimelineLane.isDrawn(event.kind) {
                lanes["\(rank.rank)/\(event.tid)/\(event.kind.isStreamWork)", default: []].append(event)
            }
        }
        return (loaded, lanes)
    }

    /// The lanes stored at import count every event they draw, their bins hold each one once, and
    /// a GPU stream's bins add up to its busy time (its kernels do not overlap).
    @Test func lanesAreStoredAtImportAndSumTheirEvents() throws {
        let (workspace, browser, id) = try imported("distributed-2rank")
        let opened = try browser.open(id)
        let (_, truth) = try truth(workspace, id)
        #expect(opened.lanes.map(\.label).prefix(2) == ["stream 7", "stream 23"])
        #expect(opened.lanes.contains { $0.rank == 1 && $0.label == "stream 84" })
        for lane in opened.lanes {
            let events = try #require(truth["\(lane.rank)/\(lane.tid)/\(lane.isGPU)"])
            #expect(lane.summary.events == events.count)
            #expect(lane.summary.bins.count == 8192)
            #expect(lane.summary.bins.reduce(0) { $0 + Int($1.count) } == events.count)
            #expect(lane.long.count == events.filter { Double($0.duration) > lane.summary.binWidth }.count)
            guard lane.isGPU else { continue }
            let busy = events.reduce(0.0) { $0 + Double($1.duration) }
            let binned = lane.summary.bins.reduce(0.0) { $0 + Double($1.busy) / 65535 } * lane.summary.binWidth
            #expect(abs(binned - busy) <= busy * 0.001 + lane.summary.binWidth * 2, "\(lane.label)")
        }
        #expect(opened.start == opened.lanes[0].summary.start && opened.end > opened.start)
    }

    /// A window's events are exactly those of the lane that reach into it, whatever the window:
    /// the short ones read by time, the long ones from the stored lane.
    @Test func aWindowReadsExactlyTheEventsThatReachIntoIt() throws {
        let (workspace, browser, id) = try imported("alexnet-a100")
        let opened = try browser.open(id)
        let (_, truth) = try truth(workspace, id)
        let span = opened.end - opened.start
        var random = SplitMix64(seed: 7)
        for trial in 0..<12 {
            let width = max(1000, Int64(Double(span) * [0.001, 0.02, 0.3][trial % 3]))
            let low = opened.start + Int64(random.uniform() * Double(span - width))
            let window = low...(low + width)
            let detail = try browser.detail(id, window: window)
            for (index, lane) in opened.lanes.enumerated() {
                let expected = try #require(truth["\(lane.rank)/\(lane.tid)/\(lane.isGPU)"])
                    .filter { $0.start + max(0, $0.duration) >= window.lowerBound && $0.start <= window.upperBound }
                    .map { "\($0.start)/\($0.index)" }.sorted()
                let got = detail.lanes[index].map { "\($0.start)/\($0.index)" }.sorted()
                #expect(got == expected, "trial \(trial), \(lane.label)")
            }
        }
    }

    /// ] from a kernel is the lane's next one in time, [ the one before; from no kernel, the
    /// first at or after the time.
    @Test func steppingFollowsTheLaneInTimeOrder() throws {
        let (workspace, browser, id) = try imported("alexnet-a100")
        let opened = try browser.open(id)
        let (_, truth) = try truth(workspace, id)
        let lane = try #require(opened.lanes.firstIndex { $0.isGPU })
        let events = try #require(truth["\(opened.lanes[lane].rank)/\(opened.lanes[lane].tid)/true"])
            .sorted { ($0.start, $0.index) < ($1.start, $1.index) }
        #expect(events.count > 10)
        var current = try #require(try browser.step(id, lane: lane, from: nil, time: events[3].start, forward: true))
        #expect(current.index == events[3].index)
        for expected in events[4..<10] {
            current = try #require(try browser.step(id, lane: lane, from: current, time: 0, forward: true))
            #expect(current.index == expected.index && current.start == expected.start)
        }
        let back = try #require(try browser.step(id, lane: lane, from: current, time: 0, forward: false))
        #expect(back.index == events[8].index)
        let last = ProfilesBrowser.Event(
            start: events.last!.start, duration: 0, name: "", family: nil, kind: .kernel, index: events.last!.index)
        #expect(try browser.step(id, lane: lane, from: last, time: 0, forward: true) == nil)
    }

    /// A profile imported before lanes were stored gets the same lanes from its events, once.
    @Test func lanesMissingFromAnOlderImportAreWorkedOutAndKept() throws {
        let (workspace, browser, id) = try imported("distributed-2rank")
        let stored = try browser.open(id)
        try workspace.write { db in
            try db.execute(sql: "DELETE FROM profiler_lanes WHERE trace_id = ?", arguments: [id])
        }
        #expect(try workspace.profilerLanes(traceID: id).isEmpty)
        #expect(try browser.open(id) == stored)
        #expect(try workspace.profilerLanes(traceID: id).count == stored.lanes.count)
    }

    /// The report is worked out once, at import, and read back after: the same figures as made
    /// from the events.
    @Test func theReportIsKeptOnceWorkedOut() throws {
        let (workspace, browser, id) = try imported("distributed-2rank")
        #expect(try workspace.profiles.profilerReport(traceID: id) != nil)
        let first = try browser.report(id)
        #expect(try browser.report(id) == first)
        let made = ProfileReport.make(
            try ProfileService(workspace: workspace).load(try #require(try workspace.profiles.profilerTrace(id: id))))
        #expect(first == made)
        #expect(first.ranks[0].temporal.map(\.nanoseconds) == [106_252_000, 172_428_000, 321_378_000])
    }
}
