import Foundation

/// Which part of a profile is analysed, and how long it lasts: the one definition that the list,
/// breakdown, kernels, timeline and compare views share, and each of them states.
///
/// By default the window is what Holistic Trace Analysis analyses: with two or more
/// ProfilerSteps the last one is left out, and so is the GPU work launched in it or with no launch
/// (`TraceAnalysis` loads traces with `include_last_profiler_step=False`, HTA 0.5 `trace.py`
/// 705-744). HTA does so because the profiler stops recording inside that step: its host side is
/// cut off and GPU work it launched may be missing, so a step that is not a full iteration would
/// skew every per-step figure. Following HTA also keeps every figure checkable against HTA's on
/// the same trace. `allSteps` keeps every event (`--all-steps`, `a` in the Profiles view).
///
/// The span is HTA's `kernel_time`: from the first GPU event's start to the last one's end in
/// the window, over all ranks (per rank, ``TemporalBreakdown/span``); a trace without GPU
/// events spans its events in the window.
package struct AnalysisWindow: Codable, Hashable, Sendable {
    /// How many ProfilerSteps the trace holds (distinct names holding `ProfilerStep`, all ranks).
    package var steps: Int
    /// Whether the last ProfilerStep is kept.
    package var allSteps: Bool
    /// Whether the trace has no GPU events in the window, so the span is its host events'.
    package var hostOnly: Bool
    /// The span's start and end, nanoseconds on the trace's clock.
    package var start: Int64
    package var end: Int64

    package init(steps: Int, allSteps: Bool, hostOnly: Bool, start: Int64, end: Int64) {
        self.steps = steps
        self.allSteps = allSteps
        self.hostOnly = hostOnly
        self.start = start
        self.end = end
    }

    /// The span's length in nanoseconds.
    package var span: Int64 { end - start }

    /// Whether the last ProfilerStep is left out (the default with two or more).
    package var leavesOutLastStep: Bool { !allSteps && steps >= 2 }

    /// Which steps: "ProfilerSteps 1–1 of 2 (last left out, as HTA)".
    package var stepsLabel: String {
        switch steps {
        case 0: "all events (no ProfilerStep)"
        case 1: "all events (1 ProfilerStep)"
        case _ where leavesOutLastStep: "ProfilerSteps 1–\(steps - 1) of \(steps) (last left out, as HTA)"
        default: "ProfilerSteps 1–\(steps) of \(steps) (all)"
        }
    }

    /// Which steps, in a few words: "steps 1–1 of 2", "no ProfilerStep".
    package var shortStepsLabel: String {
        switch steps {
        case 0: "no ProfilerStep"
        case 1: "1 ProfilerStep"
        default: "steps 1–\(leavesOutLastStep ? steps - 1 : steps) of \(steps)"
        }
    }

    /// What the span is: "GPU span 600.674 ms".
    package var spanLabel: String {
        (hostOnly ? "span (host, no GPU events) " : "GPU span ") + String(format: "%.3f ms", Double(span) / 1e6)
    }

    /// "window: ProfilerSteps 1–1 of 2 (last left out, as HTA) · GPU span 600.674 ms": short
    /// enough for an 80-column screen.
    package var description: String { "window: \(stepsLabel) · \(spanLabel)" }

    /// The window of `ranks` and each rank's events in it.
    package static func select(
        _ ranks: [RankEvents], names: ProfileNames, allSteps: Bool = false
    ) -> (window: AnalysisWindow, ranks: [RankEvents]) {
        let stepNames = Set(names.names.indices.filter { names.names[$0].contains("ProfilerStep") }.map(Int32.init))
        let kept = allSteps || stepNames.count < 2 ? ranks : ranks.map { withoutLastStep($0, steps: stepNames) }
        let gpu = kept.flatMap(\.gpuEvents)
        let spanned = gpu.isEmpty ? kept.flatMap(\.events) : gpu
        let start = spanned.lazy.map(\.start).min() ?? 0
        let end = spanned.lazy.map(\.end).max() ?? start
        return (
            AnalysisWindow(steps: stepNames.count, allSteps: allSteps, hostOnly: gpu.isEmpty, start: start, end: end),
            kept
        )
    }

    /// HTA's iteration filter for one rank: host events that start before the last step does,
    /// and the GPU work they launched (matched by correlation id).
    private static func withoutLastStep(_ rank: RankEvents, steps: Set<Int32>) -> RankEvents {
        let lastStart = rank.events.lazy.filter { !$0.kind.isStreamWork && steps.contains($0.name) }.map(\.start).max()
        guard let lastStart else { return rank }
        var kept: [ProfileEvent] = []
        var launched = Set<Int64>()
        for event in rank.events where !event.kind.isStreamWork && event.start < lastStart {
            kept.append(event)
            if event.correlation != 0 { launched.insert(event.correlation) }
        }
        for event in rank.events where event.kind.isStreamWork && launched.contains(event.correlation) {
            kept.append(event)
        }
        return RankEvents(rank: rank.rank, events: kept.sorted { ($0.start, $0.index) < ($1.start, $1.index) })
    }
}
