import Foundation
import LoupeKit
import LoupeProfiling
import LoupeStore
import Testing

/// One window and one span for every view of a profile, on the trace the walkthrough held out
/// (rank 1 of HTA's 2-rank set, imported alone; ProfilerSteps #551 and #552). The figures are
/// HTA 0.5.0's for the same file (hta-reference.json, rank 1): kernel_time 600,674 µs, NCCL
/// 168,027 µs of 306,242 µs summed kernel time.
@Suite struct ProfileWindowTests {
    static let heldOut = "Tests/LoupeProfilingTests/Fixtures/kineto/distributed-2rank/sampled_rank-1.json.gz"

    private func imported() throws -> (ProfilesBrowser, Int64) {
        let workspace = try KitFixtures.workspace("window")
        let report = try ProfileService(workspace: workspace).importFiles([KitFixtures.path(Self.heldOut)])
        return (ProfilesBrowser(workspace: workspace), report.id)
    }

    private func nccl(_ report: ProfileReport) throws -> ProfileReport.Kernel {
        try #require(report.ranks[0].kernels.first { $0.name.hasPrefix("ncclKernel_SendRecv") })
    }

    /// HTA's default window: the last step left out, its span HTA's kernel_time; the list, the
    /// breakdown, the kernels and the comparison all read it.
    @Test func everyViewReadsHTAsDefaultWindow() throws {
        let (browser, id) = try imported()
        // Analysed at import: the list has the window before the profile is first opened.
        let listed = try #require(try browser.list().windows[id])
        let report = try browser.report(id)
        #expect(listed == report.window)
        #expect(report.window.stepsLabel == "ProfilerSteps 1–1 of 2 (last left out, as HTA)")
        #expect(report.window.span == 600_674_000 && report.ranks[0].spanNs == report.window.span)
        #expect(report.window.description.hasSuffix("GPU span 600.674 ms"))
        #expect(try browser.list().windows[id] == report.window)
        #expect(report.ranks[0].kernelNs == 306_242_000)
        #expect(try nccl(report).totalNs == 168_027_000)
        let compared = try browser.compare(before: id, after: id)
        #expect(compared.beforeWindow == report.window && compared.afterGPUNs == report.ranks[0].kernelNs)
        // The timeline's lanes cover the window.
        let opened = try browser.open(id)
        #expect(opened.start <= report.window.start && opened.end >= report.window.end)
    }

    /// With every step kept the same views move together: NCCL 379.053 ms, the span 1,231.186 ms.
    @Test func allStepsMovesEveryViewTogether() throws {
        let (browser, id) = try imported()
        let report = try browser.report(id, allSteps: true)
        #expect(report.window.stepsLabel == "ProfilerSteps 1–2 of 2 (all)")
        #expect(report.window.span == 1_231_186_000 && report.ranks[0].spanNs == report.window.span)
        #expect(try nccl(report).totalNs == 379_053_000)
        #expect(report.ranks[0].kernelNs == 667_530_000)
        let compared = try browser.compare(before: id, after: id, allSteps: true)
        #expect(compared.afterWindow == report.window && compared.afterGPUNs == 667_530_000)
        // The kept default report is not replaced by the all-steps one.
        #expect(try browser.report(id).window.leavesOutLastStep)
        #expect(try browser.list().windows[id]?.leavesOutLastStep == true)
    }

    /// The percentages of one view add up to 100% of what it says they are of, and the same
    /// kernels have the same share in the kernels table and the families.
    @Test(arguments: [false, true]) func sharesAddUpAndAgreeAcrossViews(allSteps: Bool) throws {
        let workspace = try KitFixtures.workspace("window")
        let service = ProfileService(workspace: workspace)
        let id = try service.importFiles([KitFixtures.path(Self.heldOut)]).id
        let loaded = try service.load(try #require(try workspace.profiles.profilerTrace(id: id)))
        let report = ProfileReport.make(loaded, allSteps: allSteps, top: .max)
        let rank = report.ranks[0]
        func sum(_ shares: [ProfileReport.Share]) -> Double { shares.reduce(0) { $0 + $1.percent } }
        #expect(abs(sum(rank.temporal) - 100) < 1e-9)
        #expect(abs(sum(rank.kernelTypes) - 100) < 1e-9)
        #expect(abs(sum(rank.families) - 100) < 1e-9, "\(rank.families)")
        #expect(abs(rank.kernels.reduce(0) { $0 + $1.percent } - 100) < 1e-9)
        #expect(rank.families.reduce(0) { $0 + $1.nanoseconds } == rank.kernelNs)
        let communication = try #require(rank.families.first { $0.label == "communication" })
        let nccl = try nccl(report)
        #expect(communication.nanoseconds == nccl.totalNs && communication.percent == nccl.percent)
        #expect(String(format: "%.1f", nccl.percent) == (allSteps ? "56.8" : "54.9"))
    }
}
