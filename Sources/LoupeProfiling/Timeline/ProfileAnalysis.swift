/// One rank's events, as the analyses read them.
package struct RankEvents: Sendable {
    package var rank: Int
    package var events: [ProfileEvent]

    package init(rank: Int, events: [ProfileEvent]) {
        self.rank = rank
        self.events = events
    }

    /// The events the GPU ran on a stream (kernels, copies, memsets, syncs): what "busy" means.
    package var gpuEvents: [ProfileEvent] {
        events.filter { $0.kind.isStreamWork }
    }
}

/// Where a rank's GPU time went: busy with computation, busy with anything else
/// (communication, copies, syncs), or idle, over the span from its first GPU event's start to
/// its last one's end. Defined as Holistic Trace Analysis's temporal breakdown.
package struct TemporalBreakdown: Hashable, Sendable, Codable {
    package var rank: Int
    package var span: Int64
    package var idle: Int64
    package var compute: Int64
    package var nonCompute: Int64

    package func percent(_ part: Int64) -> Double { span > 0 ? 100 * Double(part) / Double(span) : 0 }
}

/// Summary statistics of a set of durations (ns): percentiles interpolate linearly between
/// order statistics (numpy's default), the deviation is the sample one.
package struct DurationStats: Hashable, Sendable, Codable {
    package var count: Int
    package var total: Int64
    package var mean: Double
    package var min: Int64
    package var max: Int64
    package var p50: Double
    package var p90: Double
    package var p99: Double
    package var std: Double

    package init(_ values: [Int64]) {
        let sorted = values.sorted()
        count = sorted.count
        total = sorted.reduce(0, +)
        mean = count > 0 ? Double(total) / Double(count) : 0
        min = sorted.first ?? 0
        max = sorted.last ?? 0
        func quantile(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let position = q * Double(sorted.count - 1)
            let low = Int(position.rounded(.down))
            let high = Swift.min(low + 1, sorted.count - 1)
            return Double(sorted[low]) + (position - Double(low)) * Double(sorted[high] - sorted[low])
        }
        p50 = quantile(0.5)
        p90 = quantile(0.9)
        p99 = quantile(0.99)
        let mean = mean
        std =
            count > 1
            ? (sorted.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(count - 1)).squareRoot()
            : 0
    }
}

/// One kernel name's launches on one rank (or over all ranks).
package struct KernelStats: Hashable, Sendable, Codable {
    package var name: String
    package var type: KernelType
    package var family: KernelFamily
    package var durations: DurationStats
}

/// A stream's idle gaps by cause, as HTA splits them: the host had not launched the next
/// kernel yet (host wait), the next kernel followed within `consecutiveKernelDelay` (kernel
/// wait), or neither (other).
package struct StreamIdle: Hashable, Sendable, Codable {
    package var rank: Int
    package var stream: Int64
    package var hostWait: Int64 = 0
    package var kernelWait: Int64 = 0
    package var other: Int64 = 0
    package var gaps: [String: DurationStats] = [:]

    package var total: Int64 { hostWait + kernelWait + other }
}

/// The time from a runtime call that launched GPU work to that work's start, per rank.
package struct LaunchStats: Hashable, Sendable, Codable {
    package var rank: Int
    package var pairs: Int
    /// The launching call's own time on the host.
    package var cpuDuration: DurationStats
    package var gpuDuration: DurationStats
    /// From the call's end to the GPU work's start (0 when the GPU started first).
    package var launchDelay: DurationStats
}

/// Temporal, kernel, idle, overlap and launch analyses of profiler traces: pure functions of the
/// events, each defined as Holistic Trace Analysis defines its figure (checked against HTA on the
/// same files), in nanoseconds where HTA rounds to microseconds.
package enum ProfileAnalysis {
    /// The runtime calls whose correlation id names the GPU work they launched.
    package static let launchNames: Set<String> = [
        "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync",
        "cudaMemsetAsync",
        "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel", "hipExtModuleLaunchKernel",
        "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
    ]

    // MARK: Intervals

    /// The union of `[start, end)` intervals, merged and in order (touching ones merge).
    package static func union(_ intervals: [(start: Int64, end: Int64)]) -> [(start: Int64, end: Int64)] {
        var merged: [(start: Int64, end: Int64)] = []
        for interval in intervals.sorted(by: { $0.start < $1.start }) {
            if let last = merged.last, interval.start <= last.end {
                merged[merged.count - 1].end = max(last.end, interval.end)
            } else {
                merged.append(interval)
            }
        }
        return merged
    }

    package static func length(_ merged: [(start: Int64, end: Int64)]) -> Int64 {
        merged.reduce(0) { $0 + ($1.end - $1.start) }
    }

    /// The length of the intersection of two merged unions.
    package static func overlap(_ a: [(start: Int64, end: Int64)], _ b: [(start: Int64, end: Int64)]) -> Int64 {
        var i = 0
        var j = 0
        var total: Int64 = 0
        while i < a.count && j < b.count {
            let start = max(a[i].start, b[j].start)
            let end = min(a[i].end, b[j].end)
            if end > start { total += end - start }
            if a[i].end < b[j].end { i += 1 } else { j += 1 }
        }
        return total
    }

    private static func intervals(_ events: [ProfileEvent]) -> [(start: Int64, end: Int64)] {
        events.map { ($0.start, $0.end) }
    }

    // MARK: Steps

    /// The events HTA analyses by default: ``AnalysisWindow``'s default window.
    package static func withoutLastStep(_ ranks: [RankEvents], names: ProfileNames) -> [RankEvents] {
        AnalysisWindow.select(ranks, names: names).ranks
    }

    // MARK: Breakdowns

    package static func temporal(_ rank: RankEvents, names: ProfileNames) -> TemporalBreakdown {
        let gpu = rank.gpuEvents
        let busy = union(intervals(gpu))
        let compute = union(intervals(gpu.filter { names.type($0.name) == .computation }))
        let span = (busy.last?.end ?? 0) - (busy.first?.start ?? 0)
        let busyTime = length(busy)
        let computeTime = length(compute)
        return TemporalBreakdown(
            rank: rank.rank, span: span, idle: span - busyTime, compute: computeTime, nonCompute: busyTime - computeTime
        )
    }

    /// Time during which exactly each set of kernel types ran (computation, communication,
    /// memory; other is left out), as HTA's kernel-type table: a set of two or more is their
    /// overlap.
    package static func typeOverlaps(_ rank: RankEvents, names: ProfileNames) -> [Set<KernelType>: Int64] {
        var boundaries: [(time: Int64, bit: Int)] = []
        let gpu = rank.gpuEvents
        for type in [KernelType.computation, .communication, .memory] {
            let merged = union(intervals(gpu.filter { names.type($0.name) == type }))
            for interval in merged {
                boundaries.append((interval.start, 1 << type.rawValue))
                boundaries.append((interval.end, -(1 << type.rawValue)))
            }
        }
        boundaries.sort { ($0.time, $0.bit) < ($1.time, $1.bit) }
        var mask = 0
        var out: [Set<KernelType>: Int64] = [:]
        for (index, boundary) in boundaries.enumerated() {
            mask += boundary.bit
            guard mask > 0, index + 1 < boundaries.count else { continue }
            let types = Set(KernelType.allCases.filter { mask & (1 << $0.rawValue) != 0 })
            out[types, default: 0] += boundaries[index + 1].time - boundary.time
        }
        return out.filter { $0.value > 0 }
    }

    /// Each kernel name's launches, longest total first.
    package static func kernels(_ events: [ProfileEvent], names: ProfileNames) -> [KernelStats] {
        stats(events.filter { $0.kind.isStreamWork }, names: names)
    }

    /// Each framework operator's calls on the host (`aten::addmm`…), longest total first; a
    /// call's time includes the operators it called.
    package static func operators(_ events: [ProfileEvent], names: ProfileNames) -> [KernelStats] {
        stats(events.filter { $0.kind == .cpuOp }, names: names)
    }

    private static func stats(_ events: [ProfileEvent], names: ProfileNames) -> [KernelStats] {
        var byName: [Int32: [ProfileEvent]] = [:]
        for event in events { byName[event.name, default: []].append(event) }
        return byName.map { id, launches in
            let name = names[id]
            return KernelStats(
                name: name, type: names.type(id), family: names.family(launches[0]),
                durations: DurationStats(launches.map(\.duration)))
        }
        .sorted { ($0.durations.total, $1.name) > ($1.durations.total, $0.name) }
    }

    /// Summed kernel time per kernel family: each GPU event's duration, overlapping ones each
    /// counted, as HTA's kernel breakdown sums a kernel's time. The families add up to
    /// ``summedKernelTime(_:)``, so their shares of it add up to 100% and equal the kernels'.
    package static func families(_ rank: RankEvents, names: ProfileNames) -> [KernelFamily: Int64] {
        var byFamily: [KernelFamily: Int64] = [:]
        for event in rank.gpuEvents {
            byFamily[names.family(event), default: 0] += event.duration
        }
        return byFamily
    }

    /// The rank's GPU events' durations summed (HTA's `dur` summed over the events with a
    /// stream): what the kernels' and families' percentages are of. Larger than the busy time
    /// when kernels on different streams overlap.
    package static func summedKernelTime(_ rank: RankEvents) -> Int64 {
        rank.gpuEvents.reduce(0) { $0 + $1.duration }
    }

    /// The share of communication time that computation overlapped, in percent; nil without
    /// communication.
    package static func communicationOverlap(_ rank: RankEvents, names: ProfileNames) -> Double? {
        let gpu = rank.gpuEvents
        let communication = union(intervals(gpu.filter { names.type($0.name) == .communication }))
        let computation = union(intervals(gpu.filter { names.type($0.name) == .computation }))
        let total = length(communication)
        guard total > 0 else { return nil }
        return 100 * Double(overlap(computation, communication)) / Double(total)
    }

    /// Each stream's idle gaps by cause. A gap is the time from one kernel's (copy's, memset's)
    /// end to the next one's start on the same stream.
    package static func idle(_ rank: RankEvents, consecutiveKernelDelay: Int64 = 30_000) -> [StreamIdle] {
        var launches: [Int64: Int64] = [:]
        for event in rank.events where !event.kind.isGPU && event.correlation != 0 {
            launches[event.correlation] = event.start
        }
        var byStream: [Int64: [ProfileEvent]] = [:]
        for event in rank.events where event.kind == .kernel || event.kind == .memcpy || event.kind == .memset {
            byStream[event.tid, default: []].append(event)
        }
        return byStream.keys.sorted().map { stream in
            let events = byStream[stream]!.sorted { ($0.start, $0.index) < ($1.start, $1.index) }
            var idle = StreamIdle(rank: rank.rank, stream: stream)
            var gaps: [String: [Int64]] = [:]
            for (previous, event) in zip(events, events.dropFirst()) {
                let gap = event.start - previous.end
                if let launched = launches[event.correlation], launched > previous.end {
                    idle.hostWait += gap
                    gaps["host_wait", default: []].append(gap)
                } else if gap < consecutiveKernelDelay {
                    idle.kernelWait += gap
                    gaps["kernel_wait", default: []].append(gap)
                } else {
                    idle.other += gap
                    gaps["other", default: []].append(gap)
                }
            }
            idle.gaps = gaps.mapValues(DurationStats.init)
            return idle
        }
    }

    /// Launch calls paired with the GPU work they started, by correlation id.
    package static func launches(_ rank: RankEvents, names: ProfileNames) -> LaunchStats {
        let launchIDs = Set(launchNames.compactMap { names.id(of: $0) })
        var calls: [Int64: [ProfileEvent]] = [:]
        for event in rank.events where !event.kind.isGPU && event.correlation != 0 && launchIDs.contains(event.name) {
            calls[event.correlation, default: []].append(event)
        }
        var cpu: [Int64] = []
        var gpu: [Int64] = []
        var delay: [Int64] = []
        for event in rank.gpuEvents where event.correlation != 0 {
            for call in calls[event.correlation] ?? [] {
                cpu.append(call.duration)
                gpu.append(event.duration)
                delay.append(max(0, event.start - call.end))
            }
        }
        return LaunchStats(
            rank: rank.rank, pairs: cpu.count, cpuDuration: DurationStats(cpu), gpuDuration: DurationStats(gpu),
            launchDelay: DurationStats(delay))
    }
}
