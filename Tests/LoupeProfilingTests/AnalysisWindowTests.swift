import Foundation
import LoupeBase
import LoupeProfiling
import Testing

/// The analysis window every Profiles view shares, and the denominators of its percentages,
/// against Holistic Trace Analysis 0.5.0 on its own test traces (hta-reference.json): the window
/// is HTA's default (the last ProfilerStep left out), its span HTA's `kernel_time`, the summed
/// kernel time HTA's summed `dur`.
@Suite struct AnalysisWindowTests {
    typealias HTA = ProfileAnalysisHTATests

    /// The window's span is from the first GPU event HTA keeps to the last one's end, over the
    /// ranks; it leaves a step out exactly when HTA's iteration filter does.
    @Test(arguments: HTA.sets) func theWindowIsHTAs(set: String) throws {
        let all = try HTA.loadAllSteps(set, htaRounding: true)
        let (window, ranks) = AnalysisWindow.select(all.ranks, names: all.names)
        let perRank = try #require(HTA.reference["sets"]?[set]?["extra_not_hta"]?["per_rank"]?.array)
        let firsts = perRank.compactMap { $0["first_gpu_ts_aligned"]?.number }
        let lasts = perRank.compactMap { $0["last_gpu_end_aligned"]?.number }
        #expect(Double(window.span) / 1000 == lasts.max()! - firsts.min()!, "\(set)")
        #expect(!window.hostOnly)
        #expect(window.leavesOutLastStep == (perRank[0]["iteration_filter_applied"]?.bool == true), "\(set)")
        #expect(window.steps == perRank[0]["profiler_step_names"]?.array?.count, "\(set)")
        // Each rank's span within it is HTA's kernel_time for the rank.
        let temporal = try #require(HTA.reference["sets"]?[set]?["temporal_breakdown"]?.array)
        for rank in ranks {
            let row = try #require(temporal.first { $0["rank"]?.int == Int64(rank.rank) })
            #expect(
                Double(ProfileAnalysis.temporal(rank, names: all.names).span) / 1000 == row["kernel_time(us)"]?.number)
        }
        // Every step kept: the span reaches the last GPU event of the trace.
        let every = AnalysisWindow.select(all.ranks, names: all.names, allSteps: true).window
        let gpu = all.ranks.flatMap(\.gpuEvents)
        #expect(every.start == gpu.map(\.start).min() && every.end == gpu.map(\.end).max())
        #expect(every.span >= window.span && !every.leavesOutLastStep)
    }

    /// The kernels' and families' percentages are of the summed kernel time, HTA's `dur` summed
    /// over the window's GPU events; the families add up to it (so to 100%), and communication
    /// is HTA's communication kernels' sum.
    @Test(arguments: HTA.sets) func familiesSumToTheSummedKernelTimeAsHTASumsIt(set: String) throws {
        let loaded = try HTA.load(set, htaRounding: true)
        let perRank = try #require(HTA.reference["sets"]?[set]?["extra_not_hta"]?["per_rank"]?.array)
        for entry in perRank {
            let rank = try #require(loaded.ranks.first { $0.rank == Int(entry["rank"]!.int!) })
            let byType = try #require(entry["gpu_dur_sum_by_kernel_type"]?.object?.dictionary)
            let htaSum = byType.values.compactMap(\.number).reduce(0, +)
            let summed = ProfileAnalysis.summedKernelTime(rank)
            // HTA rounds each end in floating point: within 1 µs per launch, and 0.1%.
            let launches = Double(rank.gpuEvents.count)
            #expect(HTA.close(Double(summed) / 1000, htaSum, relative: 1e-3, absolute: launches), "\(set)")
            #expect(abs(Double(summed) / 1000 - htaSum) <= launches, "\(set)")
            let families = ProfileAnalysis.families(rank, names: loaded.names)
            #expect(families.values.reduce(0, +) == summed, "\(set)")
            let communication = Double(families[.communication] ?? 0) / 1000
            #expect(abs(communication - (byType["COMMUNICATION"]?.number ?? 0)) <= launches, "\(set)")
        }
    }
}
