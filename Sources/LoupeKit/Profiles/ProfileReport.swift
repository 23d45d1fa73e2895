import LoupeProfiling
import LoupeStore

/// "Where did the time go" for one profile, per rank: what `loupe profile show`, its `--json`
/// and the Profiles view print. Times are nanoseconds.
package struct ProfileReport: Codable, Hashable, Sendable {
    package var id: Int64
    package var name: String
    /// Which events were analysed (HTA's default: the last ProfilerStep left out, or all) and
    /// the span they cover: what every view states.
    package var window: AnalysisWindow
    package var ranks: [Rank]

    package struct Share: Codable, Hashable, Sendable {
        package var label: String
        package var nanoseconds: Int64
        /// Of the rank's GPU span (temporal), of the busy time (kernel types), or of the summed
        /// kernel time (families).
        package var percent: Double
    }

    package struct Kernel: Codable, Hashable, Sendable {
        package var name: String
        package var type: String
        package var family: String
        package var count: Int
        package var totalNs: Int64
        package var meanNs: Double
        package var p50Ns: Double
        package var p99Ns: Double
        package var minNs: Int64
        package var maxNs: Int64
        /// Of the rank's summed kernel time (a kernel), or of its ProfilerSteps' time (an operator).
        package var percent: Double
    }

    package struct Stream: Codable, Hashable, Sendable {
        package var stream: Int64
        package var hostWaitNs: Int64
        package var kernelWaitNs: Int64
        package var otherNs: Int64
    }

    package struct Launches: Codable, Hashable, Sendable {
        package var pairs: Int
        package var meanDelayNs: Double
        package var p50DelayNs: Double
        package var p99DelayNs: Double
        package var meanCallNs: Double
    }

    package struct Rank: Codable, Hashable, Sendable {
        package var rank: Int
        /// The rank's GPU span in the window (HTA's `kernel_time`).
        package var spanNs: Int64
        /// The rank's GPU events' durations summed, overlapping ones each counted: what the
        /// kernels' and families' percentages are of.
        package var kernelNs: Int64
        /// Compute, non-compute (communication, copies, syncs) and idle, of the GPU span.
        package var temporal: [Share]
        /// Exactly which kernel types ran at once, of the busy time (HTA's kernel-type table).
        package var kernelTypes: [Share]
        /// GEMM, attention, elementwise… by summed kernel time.
        package var families: [Share]
        package var kernels: [Kernel]
        /// Framework operators on the host by total (inclusive) time: what a CPU trace has.
        package var operators: [Kernel]
        /// How much of communication computation overlapped (%), nil without communication.
        package var communicationOverlap: Double?
        package var idle: [Stream]
        package var launches: Launches
        package var cpuOnly: Bool
    }

    /// The kernels and operators per rank the kept report (``ProfileService/report(_:reporter:)``) lists.
    package static let keptTop = 15

    /// The report of `loaded`: `allSteps` keeps the last ProfilerStep that HTA leaves out.
    package static func make(_ loaded: ProfileService.Loaded, allSteps: Bool = false, top: Int = keptTop)
        -> ProfileReport
    {
        let names = loaded.names
        let (window, ranks) = AnalysisWindow.select(loaded.ranks, names: names, allSteps: allSteps)
        return ProfileReport(
            id: loaded.record.id ?? 0, name: loaded.record.name, window: window,
            ranks: ranks.map { rank(of: $0, names: names, top: top) })
    }

    static func rank(of rank: RankEvents, names: ProfileNames, top: Int) -> Rank {
        let temporal = ProfileAnalysis.temporal(rank, names: names)
        func share(_ label: String, _ ns: Int64, of total: Int64) -> Share {
            Share(label: label, nanoseconds: ns, percent: total > 0 ? 100 * Double(ns) / Double(total) : 0)
        }
        let overlaps = ProfileAnalysis.typeOverlaps(rank, names: names)
        let covered = overlaps.values.reduce(0, +)
        let kernelTypes = overlaps.sorted { $0.value > $1.value }.map { types, ns in
            share(types.sorted().map(\.label).joined(separator: " + "), ns, of: covered)
        }
        let gpuTotal = ProfileAnalysis.summedKernelTime(rank)
        let families = ProfileAnalysis.families(rank, names: names).sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { share($0.key.label, $0.value, of: gpuTotal) }
        let kernels = ProfileAnalysis.kernels(rank.events, names: names).prefix(top).map { k in
            Kernel(
                name: k.name, type: k.type.label, family: k.family.label, count: k.durations.count,
                totalNs: k.durations.total, meanNs: k.durations.mean, p50Ns: k.durations.p50, p99Ns: k.durations.p99,
                minNs: k.durations.min, maxNs: k.durations.max,
                percent: gpuTotal > 0 ? 100 * Double(k.durations.total) / Double(gpuTotal) : 0)
        }
        let stepTotal = rank.events.lazy.filter { $0.kind == .annotation && names[$0.name].hasPrefix("ProfilerStep#") }
            .reduce(0) { $0 + $1.duration }
        let operators = ProfileAnalysis.operators(rank.events, names: names).prefix(top).map { k in
            Kernel(
                name: k.name, type: "cpu_op", family: "operator", count: k.durations.count, totalNs: k.durations.total,
                meanNs: k.durations.mean, p50Ns: k.durations.p50, p99Ns: k.durations.p99, minNs: k.durations.min,
                maxNs: k.durations.max, percent: stepTotal > 0 ? 100 * Double(k.durations.total) / Double(stepTotal) : 0
            )
        }
        let launches = ProfileAnalysis.launches(rank, names: names)
        return Rank(
            rank: rank.rank, spanNs: temporal.span, kernelNs: gpuTotal,
            temporal: [
                share("compute", temporal.compute, of: temporal.span),
                share("non-compute", temporal.nonCompute, of: temporal.span),
                share("idle", temporal.idle, of: temporal.span),
            ],
            kernelTypes: kernelTypes, families: families, kernels: Array(kernels), operators: Array(operators),
            communicationOverlap: ProfileAnalysis.communicationOverlap(rank, names: names),
            idle: ProfileAnalysis.idle(rank).map {
                Stream(stream: $0.stream, hostWaitNs: $0.hostWait, kernelWaitNs: $0.kernelWait, otherNs: $0.other)
            },
            launches: Launches(
                pairs: launches.pairs, meanDelayNs: launches.launchDelay.mean, p50DelayNs: launches.launchDelay.p50,
                p99DelayNs: launches.launchDelay.p99, meanCallNs: launches.cpuDuration.mean),
            cpuOnly: rank.gpuEvents.isEmpty)
    }
}

/// Two profiles' kernels side by side (before → after a change): each kernel name's time in
/// both, new and removed kernels, over all ranks.
package struct ProfileComparison: Codable, Hashable, Sendable {
    package var before: String
    package var after: String
    /// Each profile's window: the same choice of steps for both (``AnalysisWindow``).
    package var beforeWindow: AnalysisWindow
    package var afterWindow: AnalysisWindow
    /// Each profile's summed kernel time in its window, all ranks.
    package var beforeGPUNs: Int64
    package var afterGPUNs: Int64
    package var rows: [Row]

    package struct Row: Codable, Hashable, Sendable {
        package var name: String
        package var family: String
        package var beforeCount: Int
        package var beforeNs: Int64
        package var afterCount: Int
        package var afterNs: Int64
        package var deltaNs: Int64 { afterNs - beforeNs }
        /// `new`, `removed` or `both`.
        package var presence: String
    }

    /// The comparison of the two profiles' windows: both HTA's default, or both with every step.
    package static func make(
        _ before: ProfileService.Loaded, _ after: ProfileService.Loaded, allSteps: Bool = false
    ) -> ProfileComparison {
        let beforeWindow = AnalysisWindow.select(before.ranks, names: before.names, allSteps: allSteps)
        let afterWindow = AnalysisWindow.select(after.ranks, names: after.names, allSteps: allSteps)
        func totals(_ ranks: [RankEvents], _ names: ProfileNames) -> [String: (family: String, count: Int, ns: Int64)] {
            var out: [String: (family: String, count: Int, ns: Int64)] = [:]
            for kernel in ProfileAnalysis.kernels(ranks.flatMap(\.events), names: names) {
                out[kernel.name] = (kernel.family.label, kernel.durations.count, kernel.durations.total)
            }
            return out
        }
        let a = totals(beforeWindow.ranks, before.names)
        let b = totals(afterWindow.ranks, after.names)
        let rows = Set(a.keys).union(b.keys).map { name in
            Row(
                name: name, family: (b[name] ?? a[name])!.family, beforeCount: a[name]?.count ?? 0,
                beforeNs: a[name]?.ns ?? 0, afterCount: b[name]?.count ?? 0, afterNs: b[name]?.ns ?? 0,
                presence: a[name] == nil ? "new" : b[name] == nil ? "removed" : "both")
        }
        .sorted { (abs($0.deltaNs), $1.name) > (abs($1.deltaNs), $0.name) }
        return ProfileComparison(
            before: before.record.name, after: after.record.name, beforeWindow: beforeWindow.window,
            afterWindow: afterWindow.window, beforeGPUNs: a.values.reduce(0) { $0 + $1.ns },
            afterGPUNs: b.values.reduce(0) { $0 + $1.ns }, rows: rows)
    }
}
